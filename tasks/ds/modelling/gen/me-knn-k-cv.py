"""me-knn-k-cv: choose k of a scaled k-nearest-neighbours classifier by
stratified cross-validation (sklearn's wine data).

VM:    /home/user/wine_samples.csv  sample_id, 13 chemical measurements
       (very different scales), cultivar (class_0/1/2).  A seeded
       subsample of 150-178 rows, features jittered ~1.5%.
Truth: "cv": ds_table of k,mean_accuracy for k in 1,3,...,15 with a
       StandardScaler + KNeighborsClassifier pipeline and
       StratifiedKFold(5, shuffle=True, random_state=0);
       "best_k": the k with the highest mean accuracy (ties: smallest k).
       "cv_unscaled": the same without scaling (a wrong approach, for the
       record).
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.model_selection import StratifiedKFold, cross_val_score  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
d = dsgen.load_sklearn("wine", target_names=True)
d = d.iloc[np.sort(rng.choice(len(d), size=int(rng.integers(150, 179)), replace=False))].reset_index(drop=True)
feats = [c for c in d.columns if c != "target"]
for c in feats:
    d[c] = np.round(d[c] * rng.normal(1.0, 0.015, len(d)), 4)
d["cultivar"] = d.pop("target")
d.insert(0, "sample_id", dsgen.make_ids("W", len(d), rng, width=5))
d = dsgen.shuffle(d, rng)
X, y = d[feats], d.cultivar
cv = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
rows, rows_raw = [], []
for k in range(1, 16, 2):
    s = cross_val_score(make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=k)), X, y, cv=cv).mean()
    r = cross_val_score(KNeighborsClassifier(n_neighbors=k), X, y, cv=cv).mean()
    rows.append((k, round(float(s), 4)))
    rows_raw.append((k, round(float(r), 4)))
t = pd.DataFrame(rows, columns=["k", "mean_accuracy"])
best = int(t.k[t.mean_accuracy.idxmax()])
dsgen.write_outputs(args.out, {"/home/user/wine_samples.csv": d},
                    {"cv": dsgen.table_truth(t), "best_k": best,
                     "cv_unscaled": dsgen.table_truth(pd.DataFrame(rows_raw, columns=["k", "mean_accuracy"]))})
