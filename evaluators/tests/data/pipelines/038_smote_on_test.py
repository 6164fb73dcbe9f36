# expect: FM13
# options: {}
# why: SMOTE.fit_resample is applied to the test part as well as the training part
import pandas as pd
from imblearn.over_sampling import SMOTE
from sklearn.model_selection import train_test_split
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import recall_score

df = pd.read_csv("claims.csv")
X = df.drop(columns=["fraud"])
y = df["fraud"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)

sm = SMOTE(random_state=0)
X_train, y_train = sm.fit_resample(X_train, y_train)
X_test, y_test = sm.fit_resample(X_test, y_test)

rf = RandomForestClassifier(random_state=0).fit(X_train, y_train)
print("recall", recall_score(y_test, rf.predict(X_test)))
