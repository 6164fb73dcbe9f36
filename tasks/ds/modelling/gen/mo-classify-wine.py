"""mo-classify-wine: predict the cultivar of wines (sklearn's wine data).

VM:    /home/user/wine_train.csv  id, 13 chemical features, cultivar (A/B/C)
       /home/user/wine_test.csv   id, 13 features (no label)
       A seeded stratified 65/35 split; features jittered by ~2% so that the
       data differ by seed; ids random.
Truth: "predictions": ds_predictions shape (id "id", label "cultivar",
       accuracy), threshold = max(0.85, majority baseline + 0.35); the
       baseline and a reference model's accuracy are recorded too.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
d = dsgen.load_sklearn("wine")
d = d.rename(columns={"od280_od315_of_diluted_wines": "od280_od315"})
feats = [c for c in d.columns if c != "target"]
for c in feats:
    d[c] = np.round(d[c] * rng.normal(1.0, 0.02, len(d)), 3)
d["cultivar"] = d.pop("target").map({0: "A", 1: "B", 2: "C"})
d.insert(0, "id", dsgen.make_ids("W", len(d), rng, width=4))
test_idx = []
for _, g in d.groupby("cultivar"):
    test_idx += list(rng.choice(g.index, size=int(round(0.35 * len(g))), replace=False))
test = d.loc[sorted(test_idx)]
train = dsgen.shuffle(d.drop(index=test_idx), rng)
test = dsgen.shuffle(test, rng)
base = dsgen.majority_accuracy(train.cultivar, test.cultivar)
thr = max(0.85, base + 0.35)
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
ref = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(train[feats], train.cultivar)
ref_acc = float((ref.predict(test[feats]) == test.cultivar).mean())
dsgen.write_outputs(args.out, {"/home/user/wine_train.csv": train, "/home/user/wine_test.csv": test.drop(columns=["cultivar"])},
                    {"predictions": dsgen.predictions_truth(test.id, test.cultivar, "id", "cultivar", "accuracy", thr,
                                                            baseline=base, reference=ref_acc)},
                    {"labels.csv": test[["id", "cultivar"]]})
