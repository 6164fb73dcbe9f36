# expect: none
# options: {"imbalanced": true}
# why: negative FM15: model.score is printed, but classification_report and confusion_matrix are too
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import classification_report, confusion_matrix

df = pd.read_csv("defects.csv")
X = df.drop(columns=["defective"])
y = df["defective"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, stratify=y, random_state=3)
lr = LogisticRegression(max_iter=2000, class_weight="balanced")
lr.fit(X_train, y_train)
print("accuracy:", lr.score(X_test, y_test))
y_pred = lr.predict(X_test)
print(confusion_matrix(y_test, y_pred))
print(classification_report(y_test, y_pred, digits=3))
