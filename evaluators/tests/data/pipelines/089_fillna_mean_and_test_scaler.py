# expect: FM04, FM13
# options: {}
# why: two modes: fillna with column means of the whole frame before the split, and the scaler refitted on X_test
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR
from sklearn.metrics import mean_absolute_error

df = pd.read_csv("apartments.csv")
df = df.fillna(df.median(numeric_only=True))
X = df.drop(columns=["rent"])
y = df["rent"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)

scaler = StandardScaler()
X_train = scaler.fit_transform(X_train)
X_test = scaler.fit(X_test).transform(X_test)
svr = SVR().fit(X_train, y_train)
print("MAE", mean_absolute_error(y_test, svr.predict(X_test)))
