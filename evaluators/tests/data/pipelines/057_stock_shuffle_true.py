# expect: FM05
# options: {"temporal": true}
# why: stock returns with lag features split with an explicit shuffle=True
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score

px = pd.read_csv("prices.csv", index_col="date", parse_dates=True)
px["ret"] = px["close"].pct_change()
for lag in range(1, 6):
    px[f"lag_{lag}"] = px["ret"].shift(lag)
px["up"] = (px["ret"].shift(-1) > 0).astype(int)
px = px.dropna()

X = px[[f"lag_{i}" for i in range(1, 6)]]
y = px["up"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, shuffle=True, random_state=0)
clf = LogisticRegression().fit(X_train, y_train)
print("F1", f1_score(y_test, clf.predict(X_test)))
