# expect: FM13
# options: {}
# why: the scaler is fitted on X_train and then fitted again on X_test (fit_transform instead of transform)
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score

df = pd.read_csv("bank.csv")
X = df.drop(columns=["subscribed"])
y = df["subscribed"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)

sc = StandardScaler()
X_train = sc.fit_transform(X_train)
X_test = sc.fit_transform(X_test)

lr = LogisticRegression(max_iter=1000)
lr.fit(X_train, y_train)
print("F1:", f1_score(y_test, lr.predict(X_test)))
