# expect: FM04
# options: {}
# why: categorical column filled with the mode of the whole frame, in a loop over columns, before the split
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import balanced_accuracy_score

df = pd.read_csv("adult.csv")
for col in ["workclass", "occupation", "native_country"]:
    df[col] = df[col].fillna(df[col].mode()[0])
df = pd.get_dummies(df, drop_first=True)

X = df.drop(columns=["income_>50K"])
y = df["income_>50K"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)
rf = RandomForestClassifier(n_estimators=200, random_state=0)
rf.fit(X_train, y_train)
print(balanced_accuracy_score(y_test, rf.predict(X_test)))
