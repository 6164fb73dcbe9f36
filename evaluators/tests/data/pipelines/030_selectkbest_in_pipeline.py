# expect: none
# options: {}
# why: negative FM09: SelectKBest is a Pipeline step, fitted on X_train after the split
import pandas as pd
from sklearn.pipeline import Pipeline
from sklearn.feature_selection import SelectKBest, mutual_info_classif
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.model_selection import train_test_split
from sklearn.metrics import classification_report

df = pd.read_csv("cancer.csv")
X = df.drop(columns=["diagnosis"])
y = df["diagnosis"]

pipe = Pipeline([
    ("scale", StandardScaler()),
    ("select", SelectKBest(mutual_info_classif, k=10)),
    ("svc", SVC()),
])
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)
pipe.fit(X_train, y_train)
print(classification_report(y_test, pipe.predict(X_test)))
