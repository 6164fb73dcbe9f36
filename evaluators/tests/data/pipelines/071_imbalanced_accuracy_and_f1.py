# expect: none
# options: {"imbalanced": true}
# why: negative FM15: imbalanced task, accuracy is reported but so is f1_score
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import accuracy_score, f1_score

df = pd.read_csv("creditcard.csv")
X = df.drop(columns=["Class"])
y = df["Class"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)
rf = RandomForestClassifier(class_weight="balanced", random_state=0).fit(X_train, y_train)
pred = rf.predict(X_test)
print("accuracy", accuracy_score(y_test, pred))
print("F1", f1_score(y_test, pred))
