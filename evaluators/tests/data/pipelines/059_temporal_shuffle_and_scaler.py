# expect: FM05, FM08
# options: {"temporal": true}
# why: two modes: hourly load scaled on all rows, then a shuffling split of time-ordered data
import pandas as pd
from sklearn.preprocessing import StandardScaler
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPRegressor
from sklearn.metrics import mean_absolute_error

df = pd.read_csv("hourly_load.csv", parse_dates=["ts"])
df["lag_24"] = df["load"].shift(24)
df["lag_168"] = df["load"].shift(168)
df = df.dropna()
X = df[["lag_24", "lag_168", "temperature"]]
y = df["load"]

X = StandardScaler().fit_transform(X)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=1)
mlp = MLPRegressor(hidden_layer_sizes=(64, 32), max_iter=500, random_state=1)
mlp.fit(X_train, y_train)
print("MAE", mean_absolute_error(y_test, mlp.predict(X_test)))
