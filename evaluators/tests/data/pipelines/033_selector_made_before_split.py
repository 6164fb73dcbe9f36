# expect: none
# options: {}
# why: negative FM09: the VarianceThreshold and SelectKBest objects are created before the split, fitted after it on train
import pandas as pd
from sklearn.feature_selection import VarianceThreshold, SelectKBest, chi2
from sklearn.model_selection import train_test_split
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score

vt = VarianceThreshold(0.0)
kb = SelectKBest(chi2, k=15)

df = pd.read_csv("reviews_bow.csv")
X = df.drop(columns=["positive"])
y = df["positive"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=3)

X_train = kb.fit_transform(vt.fit_transform(X_train), y_train)
X_test = kb.transform(vt.transform(X_test))
clf = LogisticRegression(max_iter=1000).fit(X_train, y_train)
print(f1_score(y_test, clf.predict(X_test)))
