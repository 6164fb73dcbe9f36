# expect: FM15
# options: {"imbalanced": true}
# why: imbalanced task, cross_val_score with no scoring argument (a classifier's default: accuracy)
import pandas as pd
from sklearn.model_selection import cross_val_score, StratifiedKFold
from sklearn.ensemble import GradientBoostingClassifier

df = pd.read_csv("rare_disease.csv")
X = df.drop(columns=["has_disease"])
y = df["has_disease"]

gb = GradientBoostingClassifier(random_state=0)
scores = cross_val_score(gb, X, y, cv=StratifiedKFold(5, shuffle=True, random_state=0))
print("mean CV score: %.4f" % scores.mean())
gb.fit(X, y)
