# expect: FM04
# options: {}
# why: df.fillna(df.mean()) on the whole frame, then train_test_split
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import mean_absolute_error

df = pd.read_csv("cars.csv")
print(df.isnull().sum())
df = df.fillna(df.mean(numeric_only=True))

X = df.drop(columns=["mpg"])
y = df["mpg"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=42)
model = RandomForestRegressor(random_state=42)
model.fit(X_train, y_train)
print("MAE:", mean_absolute_error(y_test, model.predict(X_test)))
