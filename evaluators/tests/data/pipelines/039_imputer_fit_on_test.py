# expect: FM13
# options: {}
# why: a fresh SimpleImputer is fitted on X_test (its own statistics) after the split
import pandas as pd
from sklearn.impute import SimpleImputer
from sklearn.model_selection import train_test_split
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mean_squared_error

df = pd.read_csv("crops.csv")
X = df.drop(columns=["yield"])
y = df["yield"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=9)

X_train = SimpleImputer(strategy="median").fit_transform(X_train)
test_imp = SimpleImputer(strategy="median")
X_test = test_imp.fit_transform(X_test)

lin = LinearRegression().fit(X_train, y_train)
print(mean_squared_error(y_test, lin.predict(X_test)))
