# expect: none
# options: {"imbalanced": true}
# why: negative FM15: imbalanced task validated with cross_val_score(scoring="roc_auc")
import pandas as pd
from sklearn.model_selection import cross_val_score, StratifiedKFold
from sklearn.ensemble import HistGradientBoostingClassifier

df = pd.read_csv("click_logs.csv")
X = df.drop(columns=["clicked"])
y = df["clicked"]
clf = HistGradientBoostingClassifier(class_weight="balanced")
auc = cross_val_score(clf, X, y, cv=StratifiedKFold(5, shuffle=True, random_state=0), scoring="roc_auc")
print("CV ROC AUC: %.3f" % auc.mean())
clf.fit(X, y)
