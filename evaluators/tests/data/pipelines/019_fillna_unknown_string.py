# expect: none
# options: {}
# why: negative FM04: categorical gaps filled with the constant "unknown" and numeric with -1 before the split
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score

df = pd.read_csv("leads.csv")
df["source"] = df["source"].fillna("unknown")
df["region"].fillna("unknown", inplace=True)
df["visits"] = df["visits"].fillna(-1)
df = pd.get_dummies(df, columns=["source", "region"])

X = df.drop(columns=["converted"])
y = df["converted"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
clf = LogisticRegression(max_iter=2000).fit(X_train, y_train)
print("F1:", f1_score(y_test, clf.predict(X_test)))
