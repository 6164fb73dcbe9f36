"""mo-regress-diabetes: predict disease progression (sklearn's diabetes data,
unscaled), with missing feature values to impute.

VM:    /home/user/train.csv  id, age,sex,bmi,bp,s1..s6, progression
       /home/user/test.csv   id and the features (no progression)
       A seeded 75/25 split; ~4% of the feature cells missing (empty) in both.
Truth: "predictions": ds_predictions shape, metric rmse, threshold =
       0.82 x the RMSE of predicting the training mean (a linear model with
       median imputation reaches ~0.72-0.80 of it); baseline and reference
       recorded.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
d = dsgen.load_sklearn("diabetes", scaled=False).rename(columns={"target": "progression"})
feats = ["age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"]
for c in ["bmi", "bp", "s1", "s2", "s3", "s6"]:
    d[c] = np.round(d[c] * rng.normal(1.0, 0.01, len(d)), 1)
d.insert(0, "id", dsgen.make_ids("D", len(d), rng, width=5))
d = dsgen.shuffle(d, rng)
d, _ = dsgen.inject_missing(d, ["bmi", "bp", "s1", "s3", "s5", "age"], 0.04, rng)
nte = int(round(0.25 * len(d)))
test, train = d.iloc[:nte].reset_index(drop=True), d.iloc[nte:].reset_index(drop=True)
base = dsgen.mean_baseline_rmse(train.progression, test.progression)
from sklearn.impute import SimpleImputer  # noqa: E402
from sklearn.linear_model import LinearRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
ref = make_pipeline(SimpleImputer(strategy="median"), LinearRegression()).fit(train[feats], train.progression)
ref_rmse = float(np.sqrt(np.mean((ref.predict(test[feats]) - test.progression) ** 2)))
dsgen.write_outputs(args.out, {"/home/user/train.csv": train, "/home/user/test.csv": test.drop(columns=["progression"])},
                    {"predictions": dsgen.predictions_truth(test.id, test.progression, "id", "progression", "rmse", 0.82 * base,
                                                            baseline=base, reference=ref_rmse, ratio=ref_rmse / base)},
                    {"labels.csv": test[["id", "progression"]]})
