# expect: TF05
# options: {}
# why: X = df.drop(columns=["customer_id"]) keeps the target column that y is taken from
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import f1_score

df = pd.read_csv("subscriptions.csv")
y = df["cancelled"]
X = df.drop(columns=["customer_id"])
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
rf = RandomForestClassifier(random_state=0)
rf.fit(X_train, y_train)
print("F1", f1_score(y_test, rf.predict(X_test)))
