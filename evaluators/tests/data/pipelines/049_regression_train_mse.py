# expect: FM06
# options: {}
# why: a regression fitted with numpy arrays and judged by its training MSE only
import numpy as np
import pandas as pd
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mean_squared_error, r2_score

df = pd.read_csv("salary.csv")
X = df[["years_experience", "education_level"]].values
y = df["salary"].values

reg = LinearRegression()
reg.fit(X, y)
y_hat = reg.predict(X)
print("coef", reg.coef_)
print("RMSE", np.sqrt(mean_squared_error(y, y_hat)))
print("R2", r2_score(y, y_hat))
