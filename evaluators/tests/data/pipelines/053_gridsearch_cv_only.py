# expect: none
# options: {}
# why: negative FM06: GridSearchCV with 5-fold CV is the validation; no train_test_split
import pandas as pd
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

df = pd.read_csv("ionosphere.csv")
X = df.drop(columns=["class"])
y = df["class"]

pipe = make_pipeline(StandardScaler(), SVC())
grid = GridSearchCV(pipe, {"svc__C": [0.1, 1, 10], "svc__gamma": ["scale", 0.01]}, cv=5, scoring="f1_macro")
grid.fit(X, y)
print("best CV macro F1", grid.best_score_, grid.best_params_)
final_model = grid.best_estimator_
