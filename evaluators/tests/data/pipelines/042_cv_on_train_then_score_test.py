# expect: none
# options: {}
# why: negative FM13: cross_val_score on the training part, final fit on train, score on X_test
import pandas as pd
from sklearn.model_selection import train_test_split, cross_val_score
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import f1_score

df = pd.read_csv("mushrooms.csv")
X = pd.get_dummies(df.drop(columns=["class"]))
y = (df["class"] == "p").astype(int)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)

rf = RandomForestClassifier(n_estimators=150, random_state=0)
cv = cross_val_score(rf, X_train, y_train, cv=5, scoring="f1")
print("CV F1", cv.mean())
rf.fit(X_train, y_train)
print("test F1", f1_score(y_test, rf.predict(X_test)))
print("test score", rf.score(X_test, y_test))
