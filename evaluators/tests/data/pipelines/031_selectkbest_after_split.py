# expect: none
# options: {}
# why: negative FM09/FM13: SelectKBest fitted on X_train, y_train; X_test only transformed
import pandas as pd
from sklearn.feature_selection import SelectKBest, f_regression
from sklearn.model_selection import train_test_split
from sklearn.linear_model import Ridge
from sklearn.metrics import mean_absolute_error

df = pd.read_csv("real_estate.csv")
X = df.drop(columns=["price_per_m2"])
y = df["price_per_m2"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)

kb = SelectKBest(f_regression, k=8)
X_train_k = kb.fit_transform(X_train, y_train)
X_test_k = kb.transform(X_test)

ridge = Ridge(alpha=0.5).fit(X_train_k, y_train)
print("MAE", mean_absolute_error(y_test, ridge.predict(X_test_k)))
