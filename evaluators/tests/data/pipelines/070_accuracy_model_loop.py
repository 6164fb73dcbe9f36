# expect: FM15
# options: {"imbalanced": true}
# why: imbalanced task; several classifiers compared in a loop by accuracy_score alone
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import accuracy_score

df = pd.read_csv("stroke.csv").dropna()
df = pd.get_dummies(df, drop_first=True)
X = df.drop(columns=["stroke"])
y = df["stroke"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=7)

for name, clf in [("lr", LogisticRegression(max_iter=3000)), ("dt", DecisionTreeClassifier()), ("rf", RandomForestClassifier())]:
    clf.fit(X_train, y_train)
    acc = accuracy_score(y_test, clf.predict(X_test))
    print(f"{name}: accuracy={acc:.3f}")
