# expect: FM13
# options: {}
# why: the model is fitted on the test part (X_test, y_test) and then scored on it
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import r2_score

df = pd.read_csv("co2.csv")
X = df.drop(columns=["emissions"])
y = df["emissions"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)

rf = RandomForestRegressor(n_estimators=100, random_state=0)
rf.fit(X_test, y_test)
pred = rf.predict(X_test)
print("R2 on test:", r2_score(y_test, pred))
