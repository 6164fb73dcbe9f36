# expect: none
# options: {"temporal": false}
# why: negative FM05: a default shuffling split, but the task's data is not time-ordered, so FM05 does not apply
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import f1_score

df = pd.read_csv("breast_cancer.csv")
X = df.drop(columns=["diagnosis", "id"])
y = (df["diagnosis"] == "M").astype(int)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
rf = RandomForestClassifier(random_state=0).fit(X_train, y_train)
print("F1", f1_score(y_test, rf.predict(X_test)))
