# expect: TF05
# options: {}
# why: X = df[[...]] lists the target column "defaulted" among the features
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

df = pd.read_csv("borrowers.csv")
X = df[["age", "income", "debt_ratio", "defaulted"]]
y = df["defaulted"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
lr = LogisticRegression(max_iter=1000).fit(X_train, y_train)
print("AUC", roc_auc_score(y_test, lr.predict_proba(X_test)[:, 1]))
