# expect: none
# options: {}
# why: negative FM13: a given test file is only transformed/predicted with the scaler and model fitted on the training part
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.metrics import f1_score

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
X = train.drop(columns=["target", "id"])
y = train["target"]
X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.2, random_state=0)

sc = StandardScaler()
X_train_s = sc.fit_transform(X_train)
gbc = GradientBoostingClassifier().fit(X_train_s, y_train)
print("valid F1", f1_score(y_valid, gbc.predict(sc.transform(X_valid))))

test_pred = gbc.predict(sc.transform(test.drop(columns=["id"])))
pd.DataFrame({"id": test["id"], "target": test_pred}).to_csv("submission.csv", index=False)
