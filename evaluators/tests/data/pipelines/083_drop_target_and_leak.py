# expect: none
# options: {"unavailable": ["leak_col"]}
# why: negative TF05: X = df.drop(columns=["target", "leak_col"]) removes both the target and the unavailable column
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import f1_score

df = pd.read_csv("dataset.csv")
X = df.drop(columns=["target", "leak_col"])
y = df["target"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
rf = RandomForestClassifier(random_state=0).fit(X_train, y_train)
print("F1", f1_score(y_test, rf.predict(X_test)))
