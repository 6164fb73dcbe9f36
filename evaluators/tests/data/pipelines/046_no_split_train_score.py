# expect: FM06
# options: {}
# why: the model is fitted on all the data and evaluated on the same rows, no split or cross-validation
import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import f1_score

df = pd.read_csv("customers.csv")
X = df.drop(columns=["churn"])
y = df["churn"]

model = RandomForestClassifier(n_estimators=200, random_state=0)
model.fit(X, y)
pred = model.predict(X)
print("F1:", f1_score(y, pred))
print("score:", model.score(X, y))
