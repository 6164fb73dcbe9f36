# expect: none
# options: {}
# why: negative TF05: y = df.pop("survived") removes the target, so X = df has no target column
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.metrics import f1_score

df = pd.read_csv("passengers_numeric.csv")
y = df.pop("survived")
X = df
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
gb = GradientBoostingClassifier().fit(X_train, y_train)
print("F1", f1_score(y_test, gb.predict(X_test)))
