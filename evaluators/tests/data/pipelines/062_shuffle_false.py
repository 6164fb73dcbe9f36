# expect: none
# options: {"temporal": true}
# why: negative FM05: time-ordered data split with train_test_split(..., shuffle=False)
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mean_squared_error

df = pd.read_csv("electricity.csv", parse_dates=["date"]).sort_values("date")
df["lag_7"] = df["usage"].shift(7)
df["lag_1"] = df["usage"].shift(1)
df = df.dropna()
X = df[["lag_1", "lag_7", "temp"]]
y = df["usage"]

X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, shuffle=False)
lr = LinearRegression().fit(X_train, y_train)
print("MSE", mean_squared_error(y_test, lr.predict(X_test)))
