# expect: FM04
# options: {}
# why: one column's missing values filled with the whole data's median before the split
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.linear_model import LinearRegression
df = pd.read_csv("houses.csv")
df["age"] = df["age"].fillna(df["age"].median())
X = df[["age", "rooms", "area"]]
y = df["price"]
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
lr = LinearRegression().fit(X_train, y_train)
print(lr.score(X_test, y_test))
