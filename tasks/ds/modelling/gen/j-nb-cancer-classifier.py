"""j-nb-cancer-classifier: breast-cancer biopsies (a per-seed sample of
scikit-learn's bundled data, with measurement noise and a few missing
values); train.csv has the diagnosis, test.csv not; in the Jupyter notebook:
fit a classifier and write predictions.csv (id,prediction).

truth: predictions {id, label, ids, labels, metric accuracy, threshold};
host/labels.csv
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer
import dsgen, dsgen_jupyter

args = dsgen.parse_args(extra={"test": 140})
rng = dsgen.np_rng(args.seed, 37)
b = load_breast_cancer(as_frame=True)
X = b.data.copy()
X.columns = [c.replace(" ", "_") for c in X.columns]
# 1 = malignant (the dataset's target 0)
y = (b.target == 0).astype(int)
X = X * rng.normal(1.0, 0.03, X.shape)
X = X.round(4)
idx = rng.permutation(len(X))
te, tr = idx[:args.test], idx[args.test:]
ids = dsgen.make_ids("B", len(X), rng)
train = X.iloc[tr].copy()
train.insert(0, "id", [ids[i] for i in tr])
train["diagnosis"] = np.where(y.iloc[tr] == 1, "malignant", "benign")
test = X.iloc[te].copy()
test.insert(0, "id", [ids[i] for i in te])
for df in (train, test):
    cols = rng.choice([c for c in X.columns], 4, replace=False)
    for c in cols:
        df.loc[df.sample(frac=0.03, random_state=int(rng.integers(1 << 30))).index, c] = np.nan
labels = np.where(y.iloc[te] == 1, "malignant", "benign")
base = dsgen.majority_accuracy(train["diagnosis"], labels)
truth = {"predictions": dsgen.predictions_truth(test["id"], labels, "id", "diagnosis", "accuracy", 0.9,
                                                 baseline=base),
         "notebook": {"contains": []}}
q = ("# Benign or malignant?\n\n"
     "`/home/user/train.csv` holds 30 measurements of breast-tissue biopsies (`id`, the measurement columns) and the "
     "diagnosis (`diagnosis`: `benign` or `malignant`); `/home/user/test.csv` holds new biopsies without a diagnosis. "
     "A few measurements are missing in both files.\n\n"
     "**Task:** train a classifier on train.csv and predict the diagnosis of every biopsy in test.csv. Write "
     "`/home/user/predictions.csv` with the columns `id,prediction` (prediction: `benign` or `malignant`), one row "
     "per test biopsy. It should reach an accuracy of at least 0.90 on the held-out diagnoses.")
files = {"/home/user/train.csv": train, "/home/user/test.csv": test, **dsgen_jupyter.vm_files(q)}
host = {"labels.csv": pd.DataFrame({"id": test["id"].values, "diagnosis": labels})}
dsgen.write_outputs(args.out, files, truth, host)
