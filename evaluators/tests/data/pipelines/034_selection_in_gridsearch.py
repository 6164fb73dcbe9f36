# expect: none
# options: {}
# why: negative FM09/FM13: VarianceThreshold and SelectKBest inside a pipeline tuned by GridSearchCV on the training part
import pandas as pd
from sklearn.pipeline import Pipeline
from sklearn.feature_selection import VarianceThreshold, SelectKBest, f_classif
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.metrics import roc_auc_score

df = pd.read_csv("telemetry.csv")
X = df.drop(columns=["failure"])
y = df["failure"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)

pipe = Pipeline([("vt", VarianceThreshold()), ("kb", SelectKBest(f_classif)), ("gb", GradientBoostingClassifier())])
grid = GridSearchCV(pipe, {"kb__k": [10, 20, 40], "gb__max_depth": [2, 3]}, cv=5, scoring="roc_auc")
grid.fit(X_train, y_train)
print(grid.best_params_)
print("test AUC", roc_auc_score(y_test, grid.predict_proba(X_test)[:, 1]))
