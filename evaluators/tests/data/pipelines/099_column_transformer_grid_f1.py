# expect: none
# options: {"imbalanced": true}
# why: negative: preprocessing inside a Pipeline, a grid search scored by f1 on the training part, one test evaluation
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler, OneHotEncoder
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.metrics import f1_score
df = pd.read_csv("claims.csv")
X = df.drop(columns=["fraud"])
y = df["fraud"]
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)
pre = ColumnTransformer([("num", StandardScaler(), ["amount", "age"]), ("cat", OneHotEncoder(handle_unknown="ignore"), ["region"])])
pipe = Pipeline([("pre", pre), ("clf", LogisticRegression(class_weight="balanced", max_iter=1000))])
grid = GridSearchCV(pipe, {"clf__C": [0.1, 1, 10]}, scoring="f1", cv=5)
grid.fit(X_train, y_train)
print(f1_score(y_test, grid.predict(X_test)))
