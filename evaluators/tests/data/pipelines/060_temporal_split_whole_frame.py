# expect: FM05
# options: {"temporal": true}
# why: a monthly series frame split into train/test frames by a shuffling train_test_split(df)
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.linear_model import Ridge
from sklearn.metrics import mean_absolute_percentage_error

df = pd.read_csv("monthly_demand.csv", parse_dates=["month"])
df["t"] = range(len(df))
df["lag_1"] = df["demand"].shift(1)
df["lag_12"] = df["demand"].shift(12)
df = df.dropna()

train_df, test_df = train_test_split(df, test_size=0.2, random_state=42)
features = ["t", "lag_1", "lag_12"]
ridge = Ridge(alpha=1.0)
ridge.fit(train_df[features], train_df["demand"])
print("MAPE", mean_absolute_percentage_error(test_df["demand"], ridge.predict(test_df[features])))
