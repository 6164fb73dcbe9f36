# expect: TF05
# options: {"target": "price"}
# why: with target "price", X = df.loc[:, [...]] includes price; y is built from it by a log transform
import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.linear_model import Ridge
from sklearn.metrics import mean_absolute_error

df = pd.read_csv("listings.csv")
X = df.loc[:, ["sqft", "bedrooms", "bathrooms", "price"]].values
y = np.log1p(df["price"].values)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
ridge = Ridge(alpha=1.0).fit(X_train, y_train)
print("MAE (log)", mean_absolute_error(y_test, ridge.predict(X_test)))
