# expect: none
# options: {"temporal": true}
# why: negative FM05/FM06: time-ordered data validated with TimeSeriesSplit, no train_test_split
import numpy as np
import pandas as pd
from sklearn.model_selection import TimeSeriesSplit
from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import mean_absolute_error

df = pd.read_csv("traffic.csv", parse_dates=["datetime"]).sort_values("datetime")
df["hour"] = df["datetime"].dt.hour
df["lag_1"] = df["vehicles"].shift(1)
df = df.dropna()
X = df[["hour", "lag_1", "junction"]]
y = df["vehicles"]

errs = []
for tr, te in TimeSeriesSplit(n_splits=5).split(X):
    m = RandomForestRegressor(n_estimators=100, random_state=0)
    m.fit(X.iloc[tr], y.iloc[tr])
    errs.append(mean_absolute_error(y.iloc[te], m.predict(X.iloc[te])))
print("walk-forward MAE", np.mean(errs))
