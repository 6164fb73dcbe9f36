# expect: none
# options: {}
# why: negative FM04: rows with gaps are dropped (dropna) before the split, nothing is imputed from the data
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import precision_score, recall_score

df = pd.read_csv("credit.csv")
df = df.dropna()
df = df[df["income"] > 0]
X = df.drop(columns=["approved"])
y = df["approved"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=2)
model = LogisticRegression(max_iter=1000)
model.fit(X_train, y_train)
pred = model.predict(X_test)
print(precision_score(y_test, pred), recall_score(y_test, pred))
