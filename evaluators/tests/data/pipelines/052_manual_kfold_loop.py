# expect: none
# options: {}
# why: negative FM06/FM13: a manual KFold loop; each fold's scaler and model are fitted on that fold's training rows
import numpy as np
import pandas as pd
from sklearn.model_selection import KFold
from sklearn.preprocessing import StandardScaler
from sklearn.linear_model import Ridge
from sklearn.metrics import mean_absolute_error

df = pd.read_csv("abalone.csv")
X = pd.get_dummies(df.drop(columns=["rings"]), drop_first=True).to_numpy()
y = df["rings"].to_numpy()

maes = []
for tr, va in KFold(n_splits=5, shuffle=True, random_state=0).split(X):
    sc = StandardScaler().fit(X[tr])
    m = Ridge(alpha=1.0).fit(sc.transform(X[tr]), y[tr])
    maes.append(mean_absolute_error(y[va], m.predict(sc.transform(X[va]))))
print("CV MAE", np.mean(maes))
