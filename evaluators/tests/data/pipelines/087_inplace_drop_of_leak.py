# expect: none
# options: {"unavailable": ["resolution_time"]}
# why: negative TF05: X = df.drop(columns=target), then X.drop(columns=[unavailable], inplace=True)
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score

df = pd.read_csv("support_tickets.csv")
y = df["escalated"]
X = df.drop(columns=["escalated"])
X.drop(columns=["resolution_time"], inplace=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
clf = LogisticRegression(max_iter=1000).fit(X_train, y_train)
print("F1", f1_score(y_test, clf.predict(X_test)))
