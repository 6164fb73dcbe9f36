# expect: none
# options: {}
# why: negative FM04: a separately given test file is filled with the mean of the training part, after the validation split
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import f1_score

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")

X = train.drop(columns=["label"])
y = train["label"]
X_tr, X_val, y_tr, y_val = train_test_split(X, y, test_size=0.2, random_state=0)

means = X_tr.mean()
X_tr = X_tr.fillna(means)
X_val = X_val.fillna(means)
test = test.fillna(means)

rf = RandomForestClassifier(n_estimators=300, random_state=0)
rf.fit(X_tr, y_tr)
print("validation F1:", f1_score(y_val, rf.predict(X_val)))
pd.DataFrame({"id": test["id"], "label": rf.predict(test.drop(columns=["id"]))}).to_csv("submission.csv", index=False)
