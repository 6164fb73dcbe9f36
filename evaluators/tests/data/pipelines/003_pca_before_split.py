# expect: FM08
# options: {}
# why: PCA fitted on the full feature matrix before the split
import numpy as np
import pandas as pd
from sklearn.decomposition import PCA
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC
from sklearn.metrics import accuracy_score

df = pd.read_csv("digits.csv")
X = df.drop(columns=["label"]).values
y = df["label"].values

pca = PCA(n_components=30)
X_reduced = pca.fit_transform(X)
print("explained variance:", np.sum(pca.explained_variance_ratio_))

X_train, X_test, y_train, y_test = train_test_split(X_reduced, y, test_size=0.2, random_state=1)
clf = SVC(kernel="rbf")
clf.fit(X_train, y_train)
print("accuracy:", accuracy_score(y_test, clf.predict(X_test)))
