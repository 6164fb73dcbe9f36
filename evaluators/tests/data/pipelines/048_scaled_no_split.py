# expect: FM06
# options: {}
# why: a scaler and then a model are fitted on all rows; there is no split, so no FM08 either
import pandas as pd
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.metrics import classification_report

df = pd.read_csv("seeds.csv")
X = df.drop(columns=["variety"])
y = df["variety"]

scaler = StandardScaler()
X_scaled = scaler.fit_transform(X)
svc = SVC(kernel="linear")
svc.fit(X_scaled, y)
print(classification_report(y, svc.predict(X_scaled)))
