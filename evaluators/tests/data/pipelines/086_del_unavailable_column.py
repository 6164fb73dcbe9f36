# expect: none
# options: {"unavailable": ["length_of_stay"]}
# why: negative TF05: del df["length_of_stay"] removes the unavailable column before X is taken
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import roc_auc_score

df = pd.read_csv("admissions.csv")
del df["length_of_stay"]
df = pd.get_dummies(df, columns=["ward"])
X = df.drop(columns=["readmitted_30d"])
y = df["readmitted_30d"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
rf = RandomForestClassifier(random_state=0).fit(X_train, y_train)
print("AUC", roc_auc_score(y_test, rf.predict_proba(X_test)[:, 1]))
