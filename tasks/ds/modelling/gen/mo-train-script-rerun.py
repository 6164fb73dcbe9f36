"""mo-train-script-rerun: a reusable training script for tumour diagnosis
(sklearn's breast_cancer data), checked by re-running it on a fresh split.

VM:    /home/user/cells_train.csv  sample_id, 30 features, diagnosis
       (malignant/benign); /home/user/cells_test.csv  sample_id and the
       features.  A seeded 70/30 split, features jittered ~1%, columns in the
       original order; random sample ids.
Truth: "predictions": ds_predictions shape, accuracy, threshold = majority
       baseline + 0.6 * (1 - baseline) (~0.85; a scaled logistic regression
       gets ~0.95-0.99).
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
d = dsgen.load_sklearn("breast_cancer")
feats = [c for c in d.columns if c != "target"]
for c in feats:
    d[c] = np.round(d[c] * rng.normal(1.0, 0.01, len(d)), 5)
d["diagnosis"] = d.pop("target").map({0: "malignant", 1: "benign"})
d.insert(0, "sample_id", dsgen.make_ids("S", len(d), rng, width=6))
d = dsgen.shuffle(d, rng)
nte = int(round(0.3 * len(d)))
test, train = d.iloc[:nte].reset_index(drop=True), d.iloc[nte:].reset_index(drop=True)
base = dsgen.majority_accuracy(train.diagnosis, test.diagnosis)
thr = base + 0.6 * (1 - base)
dsgen.write_outputs(args.out, {"/home/user/cells_train.csv": train, "/home/user/cells_test.csv": test.drop(columns=["diagnosis"])},
                    {"predictions": dsgen.predictions_truth(test.sample_id, test.diagnosis, "sample_id", "diagnosis", "accuracy", thr, baseline=base)},
                    {"labels.csv": test[["sample_id", "diagnosis"]]})
