# expect: none
# options: {}
# why: negative FM13: other split names (X_tr, X_te); the encoder and model are fitted on X_tr, X_te only transformed
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import OneHotEncoder
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score

df = pd.read_csv("tickets.csv")
X = df[["priority", "channel", "product"]]
y = df["escalated"]
X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.2, random_state=0)

enc = OneHotEncoder(handle_unknown="ignore")
X_tr_enc = enc.fit_transform(X_tr)
X_te_enc = enc.transform(X_te)
clf = LogisticRegression(max_iter=1000)
clf.fit(X_tr_enc, y_tr)
print("F1", f1_score(y_te, clf.predict(X_te_enc)))
