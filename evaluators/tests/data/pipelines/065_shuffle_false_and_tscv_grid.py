# expect: none
# options: {"temporal": true}
# why: negative FM05: chronological shuffle=False split, tuned with GridSearchCV(cv=TimeSeriesSplit) on the training part
import pandas as pd
from sklearn.model_selection import train_test_split, GridSearchCV, TimeSeriesSplit
from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import mean_absolute_error

df = pd.read_csv("weather.csv", parse_dates=["date"]).sort_values("date")
for k in (1, 2, 3):
    df[f"t_lag{k}"] = df["temp_max"].shift(k)
df = df.dropna()
X = df[["t_lag1", "t_lag2", "t_lag3", "humidity"]]
y = df["temp_max"]

X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.15, shuffle=False)
grid = GridSearchCV(RandomForestRegressor(random_state=0), {"max_depth": [4, 8, None]}, cv=TimeSeriesSplit(n_splits=4), scoring="neg_mean_absolute_error")
grid.fit(X_train, y_train)
print("test MAE", mean_absolute_error(y_test, grid.predict(X_test)))
