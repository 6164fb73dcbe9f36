# expect: none
# options: {}
# why: negative FM04: split first, then both parts filled with the training mean
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score

df = pd.read_csv("houses.csv")
X = df.drop(columns=["SalePrice"])
y = df["SalePrice"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=42)

train_means = X_train.mean()
X_train = X_train.fillna(train_means)
X_test = X_test.fillna(X_train.mean())

lr = LinearRegression()
lr.fit(X_train, y_train)
print("R2", r2_score(y_test, lr.predict(X_test)))
