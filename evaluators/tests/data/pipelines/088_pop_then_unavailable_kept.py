# expect: TF05
# options: {"unavailable": ["days_late"]}
# why: y = df.pop("defaulted") removes the target, but X = df still holds the unavailable days_late
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import f1_score

df = pd.read_csv("invoices.csv")
y = df.pop("defaulted")
X = df
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
rf = RandomForestClassifier(random_state=0)
rf.fit(X_train, y_train)
print("F1", f1_score(y_test, rf.predict(X_test)))
