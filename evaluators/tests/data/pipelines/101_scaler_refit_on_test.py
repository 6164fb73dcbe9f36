# expect: FM13
# options: {}
# why: the scaler is fitted again on the test part
import pandas as pd
from sklearn.preprocessing import StandardScaler
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
df = pd.read_csv("iris_like.csv")
X = df.drop(columns=["species"])
y = df["species"]
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
scaler = StandardScaler()
X_train_s = scaler.fit_transform(X_train)
scaler.fit(X_test)
X_test_s = scaler.transform(X_test)
knn = KNeighborsClassifier().fit(X_train_s, y_train)
print(knn.score(X_test_s, y_test))
