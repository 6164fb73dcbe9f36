# expect: FM08, FM13
# options: {}
# why: scaler fitted on all of X before the split, and a second scaler fitted on X_test afterwards
import pandas as pd
from sklearn.preprocessing import StandardScaler
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.metrics import classification_report

df = pd.read_csv("wine.csv")
X = df.drop(columns=["quality"])
y = df["quality"]
X = StandardScaler().fit_transform(X)

X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)

test_scaler = StandardScaler()
X_test = test_scaler.fit_transform(X_test)

knn = KNeighborsClassifier(n_neighbors=5)
knn.fit(X_train, y_train)
print(classification_report(y_test, knn.predict(X_test)))
