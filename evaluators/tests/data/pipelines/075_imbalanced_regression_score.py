# expect: none
# options: {"imbalanced": true}
# why: negative FM15: the task is flagged imbalanced but the model is a regressor; its score() is R2, not accuracy
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import RandomForestRegressor

df = pd.read_csv("claims_amounts.csv")
X = df.drop(columns=["claim_amount"])
y = df["claim_amount"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
reg = RandomForestRegressor(n_estimators=200, random_state=0)
reg.fit(X_train, y_train)
print("R2 on test:", reg.score(X_test, y_test))
