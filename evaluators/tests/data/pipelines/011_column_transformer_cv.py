# expect: none
# options: {}
# why: negative FM08/FM04/FM06: imputer and scaler inside a ColumnTransformer pipeline scored with cross_val_score, no train_test_split
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline
from sklearn.impute import SimpleImputer
from sklearn.preprocessing import StandardScaler, OneHotEncoder
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import cross_val_score

df = pd.read_csv("titanic.csv")
y = df["Survived"]
X = df.drop(columns=["Survived", "PassengerId", "Name", "Ticket", "Cabin"])

num = ["Age", "Fare", "SibSp", "Parch"]
cat = ["Sex", "Embarked", "Pclass"]
pre = ColumnTransformer([
    ("num", Pipeline([("imp", SimpleImputer(strategy="median")), ("sc", StandardScaler())]), num),
    ("cat", Pipeline([("imp", SimpleImputer(strategy="most_frequent")), ("oh", OneHotEncoder(handle_unknown="ignore"))]), cat),
])
clf = Pipeline([("pre", pre), ("rf", RandomForestClassifier(n_estimators=300, random_state=0))])
scores = cross_val_score(clf, X, y, cv=5, scoring="f1")
print("CV F1: %.3f +/- %.3f" % (scores.mean(), scores.std()))
clf.fit(X, y)
