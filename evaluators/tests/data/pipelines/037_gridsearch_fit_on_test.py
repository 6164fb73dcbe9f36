# expect: FM13
# options: {}
# why: GridSearchCV is fitted on the test part to pick hyperparameters
import pandas as pd
from sklearn.model_selection import train_test_split, GridSearchCV
from sklearn.svm import SVC
from sklearn.metrics import f1_score

df = pd.read_csv("iris.csv")
X = df.drop(columns=["species"])
y = df["species"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=42)

search = GridSearchCV(SVC(), {"C": [0.1, 1, 10], "gamma": ["scale", 0.1]}, cv=3, scoring="f1_macro")
search.fit(X_test, y_test)
best = search.best_estimator_
best.fit(X_train, y_train)
print("macro F1", f1_score(y_test, best.predict(X_test), average="macro"))
