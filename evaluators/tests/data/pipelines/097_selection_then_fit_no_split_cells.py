# expect: FM06
# options: {}
# why: several cells; features chosen with SelectKBest, then a regressor fitted and scored on the same rows; there is no split, so no FM09
# In[1]:
import pandas as pd
from sklearn.feature_selection import SelectKBest, f_regression
df = pd.read_csv("cars_prices.csv")
df = pd.get_dummies(df, drop_first=True)

# In[2]:
X = df.drop(columns=["price"])
y = df["price"]
kb = SelectKBest(f_regression, k=12)
X_k = kb.fit_transform(X, y)

# In[3]:
from sklearn.ensemble import RandomForestRegressor
rf = RandomForestRegressor(n_estimators=300, random_state=0)
rf.fit(X_k, y)
print("R2 (train):", rf.score(X_k, y))
