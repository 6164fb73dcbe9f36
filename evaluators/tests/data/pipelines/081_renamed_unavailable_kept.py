# expect: TF05
# options: {"unavailable": ["discharge_disposition"]}
# why: through a rename (data = df), X drops only the target and id; the unavailable discharge_disposition stays
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import f1_score

df = pd.read_csv("hospital.csv")
df = pd.get_dummies(df, columns=["admission_type"], drop_first=True)
data = df
y = data["readmitted"]
X = data.drop(["readmitted", "patient_id"], axis=1)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
rf = RandomForestClassifier(n_estimators=250, random_state=0)
rf.fit(X_train, y_train)
print("F1", f1_score(y_test, rf.predict(X_test)))
