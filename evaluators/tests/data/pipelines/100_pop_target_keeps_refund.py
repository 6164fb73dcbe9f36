# expect: TF05
# options: {"unavailable": ["refund"]}
# why: the target popped out of the frame, but the refund column (known only after churn) stays among the features
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import RandomForestClassifier
df = pd.read_csv("customers.csv")
X = df.drop(columns=["customer_id"])
y = X.pop("churned")
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
model = RandomForestClassifier(random_state=0)
model.fit(X_train, y_train)
print(model.score(X_test, y_test))
