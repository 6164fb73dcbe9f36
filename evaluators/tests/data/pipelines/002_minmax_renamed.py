# expect: FM08
# options: {}
# why: MinMaxScaler fitted before the split on data reached through a rename (data = df)
import pandas as pd
from sklearn.preprocessing import MinMaxScaler
from sklearn.model_selection import train_test_split
from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import mean_absolute_error

df = pd.read_csv("housing.csv")
data = df
features = data.drop(columns=["price"])
target = data["price"]

mm = MinMaxScaler()
features = mm.fit_transform(features)

X_train, X_test, y_train, y_test = train_test_split(features, target, test_size=0.25)
rf = RandomForestRegressor(n_estimators=200, random_state=0)
rf.fit(X_train, y_train)
print("MAE", mean_absolute_error(y_test, rf.predict(X_test)))
