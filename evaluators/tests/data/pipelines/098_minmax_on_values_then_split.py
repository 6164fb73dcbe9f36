# expect: FM08
# options: {}
# why: a scaler fitted on the whole feature array (.values) before a stratified split
import pandas as pd
from sklearn.preprocessing import MinMaxScaler
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC
df = pd.read_csv("sensors.csv")
features = ["t1", "t2", "vib"]
X = df[features].values
X = MinMaxScaler().fit_transform(X)
X_tr, X_te, y_tr, y_te = train_test_split(X, df["label"], stratify=df["label"], random_state=1)
clf = SVC().fit(X_tr, y_tr)
print(clf.score(X_te, y_te))
