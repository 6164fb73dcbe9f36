# expect: none
# options: {}
# why: negative FM04: fillna(0) with a constant before the split uses no statistic of the data
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import mean_absolute_error

df = pd.read_csv("sales.csv")
df = df.fillna(0)
X = df.drop(columns=["revenue"])
y = df["revenue"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=5)
model = RandomForestRegressor(n_estimators=100)
model.fit(X_train, y_train)
print(mean_absolute_error(y_test, model.predict(X_test)))
