# expect: none
# options: {"temporal": true}
# why: negative FM05/FM06: an explicit split by date (train before 2023, test after) is held-out data in time order
import pandas as pd
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.metrics import mean_absolute_error

df = pd.read_csv("orders.csv", parse_dates=["order_date"])
df["dow"] = df["order_date"].dt.dayofweek
df["month"] = df["order_date"].dt.month
features = ["dow", "month", "price", "promo"]

train = df[df["order_date"] < "2023-01-01"]
test = df[df["order_date"] >= "2023-01-01"]

model = GradientBoostingRegressor(random_state=0)
model.fit(train[features], train["units"])
print("MAE on 2023:", mean_absolute_error(test["units"], model.predict(test[features])))
