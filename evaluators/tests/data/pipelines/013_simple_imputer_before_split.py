# expect: FM04
# options: {}
# why: SimpleImputer(strategy="mean") fitted on all of X before the split
import pandas as pd
import numpy as np
from sklearn.impute import SimpleImputer
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier
from sklearn.metrics import f1_score

df = pd.read_csv("loans.csv")
X = df.drop(columns=["default"])
y = df["default"]

imputer = SimpleImputer(strategy="mean")
X = pd.DataFrame(imputer.fit_transform(X), columns=X.columns)

X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
tree = DecisionTreeClassifier(max_depth=5)
tree.fit(X_train, y_train)
print(f1_score(y_test, tree.predict(X_test)))
