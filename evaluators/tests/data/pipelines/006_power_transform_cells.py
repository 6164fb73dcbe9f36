# expect: FM08
# options: {}
# why: several notebook cells' worth of code; PowerTransformer fitted on the whole frame two cells before the split
# In[1]:
import pandas as pd
import numpy as np
from sklearn.preprocessing import PowerTransformer

df = pd.read_csv("insurance.csv")
df = pd.get_dummies(df, columns=["sex", "smoker", "region"], drop_first=True)
df.head()

# In[2]:
skewed = ["bmi", "age"]
pt = PowerTransformer(method="yeo-johnson")
df[skewed] = pt.fit_transform(df[skewed])
df.describe()

# In[3]:
from sklearn.model_selection import train_test_split
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.metrics import mean_squared_error

X = df.drop(columns=["charges"])
y = np.log1p(df["charges"])
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=42)

# In[4]:
gbr = GradientBoostingRegressor(random_state=42)
gbr.fit(X_train, y_train)
print("RMSE:", np.sqrt(mean_squared_error(y_test, gbr.predict(X_test))))
