# expect: none
# options: {}
# why: negative FM08: the scaler lives inside make_pipeline, built before the split but fitted on X_train only
import pandas as pd
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.metrics import f1_score

df = pd.read_csv("heart.csv")
X = df.drop(columns=["target"])
y = df["target"]

pipe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))

X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)
pipe.fit(X_train, y_train)
print("F1", f1_score(y_test, pipe.predict(X_test)))
