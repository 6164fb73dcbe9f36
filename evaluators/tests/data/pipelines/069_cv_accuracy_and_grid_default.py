# expect: FM15
# options: {"imbalanced": true}
# why: imbalanced task; GridSearchCV with its default scoring and cross_val_score(scoring="accuracy") are the only evaluation
import pandas as pd
from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split
from sklearn.svm import SVC

df = pd.read_csv("intrusions.csv")
X = df.drop(columns=["attack"])
y = df["attack"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)

grid = GridSearchCV(SVC(), {"C": [0.5, 1, 5]}, cv=5)
grid.fit(X_train, y_train)
print("best CV:", grid.best_score_)
acc = cross_val_score(grid.best_estimator_, X_train, y_train, cv=5, scoring="accuracy")
print("cv accuracy", acc.mean())
print("test accuracy", grid.score(X_test, y_test))
