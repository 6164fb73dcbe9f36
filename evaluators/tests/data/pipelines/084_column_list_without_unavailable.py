# expect: none
# options: {"unavailable": ["final_balance"]}
# why: negative TF05: X = df[["a", ...]] names only columns known at prediction time
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import recall_score

df = pd.read_csv("accounts.csv")
X = df[["tenure", "monthly_charge", "num_products", "age"]]
y = df["closed"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
lr = LogisticRegression(max_iter=1000).fit(X_train, y_train)
print("recall", recall_score(y_test, lr.predict(X_test)))
