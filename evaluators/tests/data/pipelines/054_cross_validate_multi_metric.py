# expect: none
# options: {}
# why: negative FM06: cross_validate with several metrics, then the model is fitted on everything for deployment
import pandas as pd
import joblib
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import cross_validate, StratifiedKFold

df = pd.read_csv("defaults.csv")
X = df.drop(columns=["default_next_month", "ID"])
y = df["default_next_month"]

clf = HistGradientBoostingClassifier(max_iter=200)
cv = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
res = cross_validate(clf, X, y, cv=cv, scoring=["roc_auc", "f1", "accuracy"])
for k in ["test_roc_auc", "test_f1", "test_accuracy"]:
    print(k, res[k].mean())
clf.fit(X, y)
joblib.dump(clf, "model.joblib")
