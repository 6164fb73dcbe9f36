# expect: FM04, FM05
# options: {"temporal": true}
# why: two modes: gaps in a time series filled with the overall mean, then a shuffling train_test_split
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import mean_absolute_error

df = pd.read_csv("pollution_hourly.csv", parse_dates=["ts"]).sort_values("ts")
df["no2"] = df["no2"].fillna(df["no2"].mean())
df["lag_1"] = df["no2"].shift(1)
df = df.dropna()
X = df[["lag_1", "wind", "temp"]]
y = df["no2"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
rf = RandomForestRegressor(random_state=0).fit(X_train, y_train)
print("MAE", mean_absolute_error(y_test, rf.predict(X_test)))
