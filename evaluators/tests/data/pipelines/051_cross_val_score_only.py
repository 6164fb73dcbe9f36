# expect: none
# options: {}
# why: negative FM06: no train_test_split, but the model is evaluated with cross_val_score before the final fit
import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import cross_val_score

df = pd.read_csv("water_potability.csv").dropna()
X = df.drop(columns=["Potability"])
y = df["Potability"]

rf = RandomForestClassifier(n_estimators=300, random_state=0)
scores = cross_val_score(rf, X, y, cv=5, scoring="f1")
print("5-fold F1: %.3f" % scores.mean())
rf.fit(X, y)
