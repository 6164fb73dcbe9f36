# expect: FM06, TF05
# options: {}
# why: two modes: X = df keeps the target column, and the model is fitted and scored with no held-out data
import pandas as pd
from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import r2_score

df = pd.read_csv("cement.csv")
y = df["strength"]
X = df
model = RandomForestRegressor(random_state=0)
model.fit(X, y)
print("R2:", r2_score(y, model.predict(X)))
