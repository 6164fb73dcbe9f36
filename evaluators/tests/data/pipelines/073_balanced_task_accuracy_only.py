# expect: none
# options: {"imbalanced": false}
# why: negative FM15: accuracy only, but the classes are balanced so FM15 does not apply
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.metrics import accuracy_score

df = pd.read_csv("iris.csv")
X = df.drop(columns=["species"])
y = df["species"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
knn = KNeighborsClassifier(n_neighbors=7).fit(X_train, y_train)
print("accuracy", accuracy_score(y_test, knn.predict(X_test)))
