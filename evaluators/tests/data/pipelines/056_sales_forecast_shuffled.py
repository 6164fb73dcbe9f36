# expect: FM05
# options: {"temporal": true}
# why: daily sales (time-ordered) split with the default shuffling train_test_split
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import mean_absolute_error

df = pd.read_csv("daily_sales.csv", parse_dates=["date"])
df = df.sort_values("date")
df["dow"] = df["date"].dt.dayofweek
df["month"] = df["date"].dt.month
X = df[["dow", "month", "promo", "store_id"]]
y = df["sales"]

X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=42)
model = RandomForestRegressor(n_estimators=200, random_state=42)
model.fit(X_train, y_train)
print("MAE:", mean_absolute_error(y_test, model.predict(X_test)))
