# expect: none
# options: {}
# why: negative FM04/FM13: KNNImputer fitted on X_train, only transform on X_test
import pandas as pd
from sklearn.impute import KNNImputer
from sklearn.model_selection import train_test_split
from sklearn.svm import SVR
from sklearn.metrics import mean_squared_error

df = pd.read_csv("concrete.csv")
X = df.drop(columns=["strength"])
y = df["strength"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=11)

imp = KNNImputer(n_neighbors=3)
X_train = imp.fit_transform(X_train)
X_test = imp.transform(X_test)

svr = SVR(C=10.0)
svr.fit(X_train, y_train)
print(mean_squared_error(y_test, svr.predict(X_test)))
