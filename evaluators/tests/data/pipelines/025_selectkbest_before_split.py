# expect: FM09
# options: {}
# why: SelectKBest(f_classif) fitted on all of X and y before the split
import pandas as pd
from sklearn.feature_selection import SelectKBest, f_classif
from sklearn.model_selection import train_test_split
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score

df = pd.read_csv("genes.csv")
X = df.drop(columns=["cancer"])
y = df["cancer"]

selector = SelectKBest(score_func=f_classif, k=20)
X_sel = selector.fit_transform(X, y)

X_train, X_test, y_train, y_test = train_test_split(X_sel, y, test_size=0.2, random_state=0)
clf = LogisticRegression(max_iter=1000)
clf.fit(X_train, y_train)
print(f1_score(y_test, clf.predict(X_test)))
