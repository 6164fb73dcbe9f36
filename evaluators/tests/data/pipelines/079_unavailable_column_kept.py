# expect: TF05
# options: {"unavailable": ["chargeback_amount"]}
# why: the target is dropped but chargeback_amount (known only after the fact) stays in X
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.metrics import average_precision_score

df = pd.read_csv("transactions.csv")
X = df.drop(columns=["is_fraud", "transaction_id"])
y = df["is_fraud"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)
gb = GradientBoostingClassifier().fit(X_train, y_train)
print("AP", average_precision_score(y_test, gb.predict_proba(X_test)[:, 1]))
