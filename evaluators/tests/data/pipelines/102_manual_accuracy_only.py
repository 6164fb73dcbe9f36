# expect: FM15
# options: {"imbalanced": true}
# why: accuracy computed by hand is the only metric on imbalanced data
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier
df = pd.read_csv("defects.csv")
X = df.drop(columns=["defect"])
y = df["defect"]
X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=3)
clf = DecisionTreeClassifier(max_depth=4).fit(X_tr, y_tr)
pred = clf.predict(X_te)
print("acc", (pred == y_te).mean())
