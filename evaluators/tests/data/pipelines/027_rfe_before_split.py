# expect: FM09
# options: {}
# why: RFE with a linear model fitted on all rows before the split
import pandas as pd
from sklearn.feature_selection import RFE
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import train_test_split
from sklearn.metrics import r2_score

df = pd.read_csv("boston.csv")
X = df.drop(columns=["MEDV"])
y = df["MEDV"]

rfe = RFE(LinearRegression(), n_features_to_select=6)
rfe.fit(X, y)
keep = X.columns[rfe.support_]
X = X[keep]

X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=42)
lr = LinearRegression().fit(X_train, y_train)
print("R2", r2_score(y_test, lr.predict(X_test)))
