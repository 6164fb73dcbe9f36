# expect: TF05
# options: {}
# why: X = df (every column, the target included) after y = df.default
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier
from sklearn.metrics import recall_score

df = pd.read_csv("loans_clean.csv")
df = pd.get_dummies(df, columns=["purpose"], drop_first=True)
y = df.default
X = df
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=1)
dt = DecisionTreeClassifier(max_depth=6).fit(X_train, y_train)
print("recall", recall_score(y_test, dt.predict(X_test)))
