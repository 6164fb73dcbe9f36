# expect: FM06, FM15
# options: {"imbalanced": true}
# why: two modes: imbalanced classifier fitted on all rows, evaluated on them with accuracy_score only
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score

df = pd.read_csv("machine_failures.csv")
X = df.drop(columns=["failed"])
y = df["failed"]
clf = LogisticRegression(max_iter=1000)
clf.fit(X, y)
print("training accuracy:", accuracy_score(y, clf.predict(X)))
