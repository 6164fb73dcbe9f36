# expect: FM08, FM09
# options: {}
# why: two modes: MaxAbsScaler then SelectPercentile, both fitted on all of X before the split
import pandas as pd
from sklearn.preprocessing import MaxAbsScaler
from sklearn.feature_selection import SelectPercentile, chi2
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import MultinomialNB
from sklearn.metrics import f1_score

df = pd.read_csv("spam_features.csv")
X = df.drop(columns=["is_spam"])
y = df["is_spam"]

X = MaxAbsScaler().fit_transform(X)
sp = SelectPercentile(chi2, percentile=25)
X = sp.fit_transform(X, y)

X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=8)
nb = MultinomialNB()
nb.fit(X_train, y_train)
print("F1", f1_score(y_test, nb.predict(X_test)))
