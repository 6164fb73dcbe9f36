# expect: FM09
# options: {}
# why: SelectFromModel(RandomForest) fitted on the full data before the split
import pandas as pd
from sklearn.feature_selection import SelectFromModel
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split
from sklearn.metrics import roc_auc_score

df = pd.read_csv("marketing.csv")
y = df["responded"]
X = df.drop(columns=["responded"])

sfm = SelectFromModel(RandomForestClassifier(n_estimators=100, random_state=0))
X_small = sfm.fit_transform(X, y)

X_train, X_test, y_train, y_test = train_test_split(X_small, y, test_size=0.2, random_state=0)
model = RandomForestClassifier(n_estimators=300, random_state=0)
model.fit(X_train, y_train)
print("AUC", roc_auc_score(y_test, model.predict_proba(X_test)[:, 1]))
