# expect: none
# options: {}
# why: negative FM04: the frame is split first; each part's Age is filled with the median of the training frame
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score

df = pd.read_csv("titanic.csv")
train_df, test_df = train_test_split(df, test_size=0.2, random_state=0)
age_median = train_df["Age"].median()
train_df["Age"] = train_df["Age"].fillna(age_median)
test_df["Age"] = test_df["Age"].fillna(train_df["Age"].median())

cols = ["Pclass", "Age", "SibSp", "Parch", "Fare"]
clf = LogisticRegression(max_iter=1000)
clf.fit(train_df[cols], train_df["Survived"])
print("F1", f1_score(test_df["Survived"], clf.predict(test_df[cols])))
