# expect: FM15
# options: {"imbalanced": true}
# why: imbalanced churn classifier evaluated only with model.score (accuracy)
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.linear_model import LogisticRegression

df = pd.read_csv("telco_churn.csv")
X = pd.get_dummies(df.drop(columns=["Churn", "customerID"]), drop_first=True)
y = df["Churn"].map({"Yes": 1, "No": 0})
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)

sc = StandardScaler().fit(X_train)
clf = LogisticRegression(max_iter=1000)
clf.fit(sc.transform(X_train), y_train)
print("Test accuracy:", clf.score(sc.transform(X_test), y_test))
