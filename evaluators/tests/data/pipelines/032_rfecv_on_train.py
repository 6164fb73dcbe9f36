# expect: none
# options: {}
# why: negative FM09: RFECV (which cross-validates internally) fitted on the training part only
import pandas as pd
from sklearn.feature_selection import RFECV
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split, StratifiedKFold
from sklearn.metrics import f1_score

df = pd.read_csv("employees.csv")
X = pd.get_dummies(df.drop(columns=["left_company"]), drop_first=True)
y = df["left_company"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, stratify=y, random_state=1)

rfecv = RFECV(RandomForestClassifier(n_estimators=100, random_state=1), step=1, cv=StratifiedKFold(5), scoring="f1")
rfecv.fit(X_train, y_train)
cols = X_train.columns[rfecv.support_]

final = RandomForestClassifier(n_estimators=300, random_state=1)
final.fit(X_train[cols], y_train)
print("F1", f1_score(y_test, final.predict(X_test[cols])))
