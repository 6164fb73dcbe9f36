# expect: FM09
# options: {}
# why: several cells; SelectKBest fitted on a renamed copy of the full data (data = df.copy()) two cells before the split
# In[1]:
import pandas as pd
df = pd.read_csv("gene_expression.csv")
data = df.copy()

# In[2]:
from sklearn.feature_selection import SelectKBest, f_classif
features = data.drop(columns=["tumor_type"])
labels = data["tumor_type"]
kbest = SelectKBest(f_classif, k=50)
kbest.fit(features, labels)
features = features[features.columns[kbest.get_support()]]

# In[3]:
from sklearn.model_selection import train_test_split
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score
X_train, X_test, y_train, y_test = train_test_split(features, labels, test_size=0.2, stratify=labels, random_state=0)
clf = LogisticRegression(max_iter=5000).fit(X_train, y_train)
print("macro F1", f1_score(y_test, clf.predict(X_test), average="macro"))
