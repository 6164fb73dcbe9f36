# expect: FM06
# options: {}
# why: several cells; a loop compares models by their score on the very rows they were fitted on
# In[1]:
import pandas as pd
df = pd.read_csv("penguins.csv").dropna()
df = pd.get_dummies(df, columns=["island", "sex"], drop_first=True)

# In[2]:
X = df.drop(columns=["species"])
y = df["species"]

# In[3]:
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier
from sklearn.ensemble import RandomForestClassifier

for clf in [LogisticRegression(max_iter=2000), DecisionTreeClassifier(), RandomForestClassifier()]:
    clf.fit(X, y)
    print(type(clf).__name__, clf.score(X, y))
