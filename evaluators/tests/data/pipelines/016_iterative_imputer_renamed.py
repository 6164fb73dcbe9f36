# expect: FM04
# options: {}
# why: IterativeImputer fitted on a renamed copy of the data, which is what gets split
import pandas as pd
from sklearn.experimental import enable_iterative_imputer  # noqa: F401
from sklearn.impute import IterativeImputer
from sklearn.model_selection import train_test_split
from sklearn.linear_model import Ridge
from sklearn.metrics import mean_squared_error

raw = pd.read_csv("air_quality.csv")
data = raw
X_raw = data.drop(columns=["pm25"])
y = data["pm25"]

it = IterativeImputer(max_iter=10, random_state=0)
X_filled = it.fit_transform(X_raw)

X_train, X_test, y_train, y_test = train_test_split(X_filled, y, test_size=0.2, random_state=0)
ridge = Ridge().fit(X_train, y_train)
print("MSE", mean_squared_error(y_test, ridge.predict(X_test)))
