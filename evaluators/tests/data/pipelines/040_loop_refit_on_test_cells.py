# expect: FM13
# options: {}
# why: several cells; inside a loop over models each one is refitted on the test part before scoring
# In[1]:
import pandas as pd
from sklearn.model_selection import train_test_split

df = pd.read_csv("students.csv")
df = pd.get_dummies(df, drop_first=True)
X = df.drop(columns=["final_grade"])
y = df["final_grade"]

# In[2]:
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)

# In[3]:
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import mean_absolute_error

results = {}
for model in [LinearRegression(), Ridge(alpha=2.0), RandomForestRegressor(random_state=0)]:
    model.fit(X_train, y_train)
    model.fit(X_test, y_test)
    results[type(model).__name__] = mean_absolute_error(y_test, model.predict(X_test))
print(results)
