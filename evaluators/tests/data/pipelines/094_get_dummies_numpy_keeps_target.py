# expect: TF05
# options: {}
# why: X = pd.get_dummies(df).to_numpy() encodes every column, the target "approved" included
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.metrics import f1_score

df = pd.read_csv("applications.csv")
y = df["approved"]
X = pd.get_dummies(df, columns=["employment", "housing"]).to_numpy()
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
gb = GradientBoostingClassifier().fit(X_train, y_train)
print("F1", f1_score(y_test, gb.predict(X_test)))
