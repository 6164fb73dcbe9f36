# expect: none
# options: {}
# why: negative FM13: the test part appears only in transform, predict, predict_proba and score
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import classification_report, roc_auc_score

df = pd.read_csv("churn.csv")
X = df.drop(columns=["Exited", "CustomerId", "Surname"])
X = pd.get_dummies(X, drop_first=True)
y = df["Exited"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)

scaler = StandardScaler().fit(X_train)
X_test_scaled = scaler.transform(X_test)
model = LogisticRegression(max_iter=1000).fit(scaler.transform(X_train), y_train)
print(classification_report(y_test, model.predict(X_test_scaled)))
print("AUC", roc_auc_score(y_test, model.predict_proba(X_test_scaled)[:, 1]))
print("accuracy", model.score(X_test_scaled, y_test))
