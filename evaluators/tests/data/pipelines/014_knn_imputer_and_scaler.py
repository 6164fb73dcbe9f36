# expect: FM04, FM08
# options: {}
# why: KNNImputer and StandardScaler both fitted on the full feature matrix before the split
import pandas as pd
from sklearn.impute import KNNImputer
from sklearn.preprocessing import StandardScaler
from sklearn.model_selection import train_test_split
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

df = pd.read_csv("patients.csv")
X = df.drop(columns=["disease"])
y = df["disease"]

X_imp = KNNImputer(n_neighbors=5).fit_transform(X)
X_std = StandardScaler().fit_transform(X_imp)

X_train, X_test, y_train, y_test = train_test_split(X_std, y, test_size=0.2, random_state=1)
model = LogisticRegression()
model.fit(X_train, y_train)
print("AUC", roc_auc_score(y_test, model.predict_proba(X_test)[:, 1]))
