# expect: FM09
# options: {}
# why: VarianceThreshold fitted on the whole feature frame before the split
import pandas as pd
from sklearn.feature_selection import VarianceThreshold
from sklearn.model_selection import train_test_split
from sklearn.ensemble import ExtraTreesClassifier
from sklearn.metrics import f1_score

df = pd.read_csv("sensors.csv")
X = df.drop(columns=["fault"])
y = df["fault"]

vt = VarianceThreshold(threshold=0.01)
vt.fit(X)
X = X.loc[:, vt.get_support()]

X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=4)
et = ExtraTreesClassifier(n_estimators=200)
et.fit(X_train, y_train)
print("macro F1", f1_score(y_test, et.predict(X_test), average="macro"))
