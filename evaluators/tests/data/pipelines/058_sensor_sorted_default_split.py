# expect: FM05
# options: {"temporal": true}
# why: sensor readings sorted by timestamp, then split with train_test_split without shuffle=False
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.metrics import mean_squared_error

df = pd.read_csv("turbine.csv", parse_dates=["timestamp"]).sort_values("timestamp")
df["hour"] = df["timestamp"].dt.hour
df["rolling_temp"] = df["temp"].rolling(12).mean()
df = df.dropna()
X = df.drop(columns=["timestamp", "power_output"])
y = df["power_output"]

X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2)
gbr = GradientBoostingRegressor().fit(X_train, y_train)
print("MSE", mean_squared_error(y_test, gbr.predict(X_test)))
