# expect: none
# options: {"imbalanced": true}
# why: negative FM15: accuracy_score is printed, but the grid search scores with balanced_accuracy and balanced_accuracy_score is reported
import pandas as pd
from sklearn.model_selection import train_test_split, GridSearchCV
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import accuracy_score, balanced_accuracy_score

df = pd.read_csv("churn_bank.csv")
X = pd.get_dummies(df.drop(columns=["Exited"]), drop_first=True)
y = df["Exited"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)
grid = GridSearchCV(RandomForestClassifier(random_state=0), {"max_depth": [5, 10, None]}, cv=5, scoring="balanced_accuracy")
grid.fit(X_train, y_train)
pred = grid.predict(X_test)
print("accuracy", accuracy_score(y_test, pred))
print("balanced accuracy", balanced_accuracy_score(y_test, pred))
