# expect: none
# options: {}
# why: negative FM08/FM13: split before a loop over models; the scaler is fitted on X_train inside the loop
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.linear_model import LogisticRegression
from sklearn.svm import SVC
from sklearn.neighbors import KNeighborsClassifier
from sklearn.metrics import f1_score

df = pd.read_csv("diabetes.csv")
X = df.drop(columns=["Outcome"])
y = df["Outcome"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=42)

models = {"logreg": LogisticRegression(max_iter=1000), "svc": SVC(), "knn": KNeighborsClassifier()}
for name, model in models.items():
    scaler = StandardScaler()
    Xtr = scaler.fit_transform(X_train)
    Xte = scaler.transform(X_test)
    model.fit(Xtr, y_train)
    print(name, f1_score(y_test, model.predict(Xte)))
