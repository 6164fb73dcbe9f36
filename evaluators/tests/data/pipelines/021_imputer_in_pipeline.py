# expect: none
# options: {}
# why: negative FM04: the SimpleImputer is a Pipeline step, fitted on X_train after the split
import pandas as pd
from sklearn.pipeline import Pipeline
from sklearn.impute import SimpleImputer
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.model_selection import train_test_split
from sklearn.metrics import mean_absolute_error

df = pd.read_csv("flights.csv")
X = df.drop(columns=["delay_minutes"])
y = df["delay_minutes"]

pipe = Pipeline([
    ("impute", SimpleImputer(strategy="median")),
    ("model", HistGradientBoostingRegressor()),
])
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
pipe.fit(X_train, y_train)
print("MAE:", mean_absolute_error(y_test, pipe.predict(X_test)))
