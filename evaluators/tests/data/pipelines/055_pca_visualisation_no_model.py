# expect: none
# options: {}
# why: negative FM06/FM08: only a scaler and PCA are fitted (for a plot), no model and no split
import pandas as pd
import matplotlib.pyplot as plt
from sklearn.preprocessing import StandardScaler
from sklearn.decomposition import PCA

df = pd.read_csv("countries.csv")
num = df.select_dtypes("number")
Z = StandardScaler().fit_transform(num)
pca = PCA(n_components=2)
coords = pca.fit_transform(Z)

plt.figure(figsize=(8, 6))
plt.scatter(coords[:, 0], coords[:, 1], s=12)
for i, name in enumerate(df["country"]):
    plt.annotate(name, coords[i], fontsize=6)
plt.title("PCA of country indicators")
plt.savefig("pca.png", dpi=150)
