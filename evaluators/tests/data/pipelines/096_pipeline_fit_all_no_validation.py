# expect: FM06
# options: {}
# why: a preprocessing+model Pipeline fitted on all of train.csv, judged by its training report, then used on test.csv; no validation
import pandas as pd
from sklearn.pipeline import make_pipeline
from sklearn.impute import SimpleImputer
from sklearn.preprocessing import StandardScaler
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import classification_report

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
X = train.drop(columns=["label", "id"])
y = train["label"]

pipe = make_pipeline(SimpleImputer(strategy="median"), StandardScaler(), LogisticRegression(max_iter=1000))
pipe.fit(X, y)
print(classification_report(y, pipe.predict(X)))
test["label"] = pipe.predict(test.drop(columns=["id"]))
test[["id", "label"]].to_csv("predictions.csv", index=False)
