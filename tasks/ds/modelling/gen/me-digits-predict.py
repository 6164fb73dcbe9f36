"""me-digits-predict: classify handwritten digits from 8x8 pixel intensities
(sklearn's digits data) and predict a held-out file.

VM:    /home/user/digits_train.csv  image_id, p00..p63 (0-16), digit
       /home/user/digits_test.csv   image_id, p00..p63
       A seeded ~65/35 split; about 2% of pixels perturbed by +-1 (clipped).
Truth: "predictions": ds_predictions, accuracy, threshold =
       baseline + 0.93 * (1 - baseline) (~0.93; an RBF SVC or a scaled
       logistic regression gets 0.96-0.99, a constant class ~0.10).
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
d = dsgen.load_sklearn("digits")
px = [c for c in d.columns if c != "target"]
ren = {c: f"p{i:02d}" for i, c in enumerate(px)}
d = d.rename(columns=ren)
px = list(ren.values())
P = d[px].to_numpy()
mask = rng.random(P.shape) < 0.02
P = np.clip(P + mask * rng.choice([-1, 1], P.shape), 0, 16).astype(int)
d[px] = P
d["digit"] = d.pop("target").astype(int)
d.insert(0, "image_id", dsgen.make_ids("IMG", len(d), rng, width=5))
d = dsgen.shuffle(d, rng)
nte = int(round(len(d) * rng.uniform(0.32, 0.38)))
test, train = d.iloc[:nte].reset_index(drop=True), d.iloc[nte:].reset_index(drop=True)
base = dsgen.majority_accuracy(train.digit, test.digit)
thr = base + 0.93 * (1 - base)
dsgen.write_outputs(args.out, {"/home/user/digits_train.csv": train, "/home/user/digits_test.csv": test.drop(columns=["digit"])},
                    {"predictions": dsgen.predictions_truth(test.image_id, test.digit, "image_id", "digit", "accuracy", thr, baseline=base)},
                    {"labels.csv": test[["image_id", "digit"]]})
