"""p-mo-loan-default: predict loan default (binary, F1) from two joined CSVs.

VM:    /home/user/applicants.csv  applicant_id, age, income (some blank),
       employment_years, home (rent/own/mortgage), purpose
       /home/user/credit.csv      applicant_id, open_loans, late_payments_12m,
       utilization, debt_to_income  (rows in another order)
       /home/user/train_labels.csv applicant_id, defaulted (0/1) for 70%.
Truth: "predictions": ds_predictions, metric f1 (positive 1) on the other 30%;
       threshold = F1(all ones) + 0.5 * (F1(reference) - F1(all ones)) where
       the reference is a scaled logistic regression on the joined features.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args(extra={"rows": 1500})
rng = dsgen.np_rng(args.seed)
n = args.rows
ids = dsgen.make_ids("A", n, rng, width=6)
age = rng.integers(21, 70, n)
income = np.round(rng.lognormal(10.6, 0.45, n), -2)
emp = np.clip(np.round(rng.gamma(2.0, 3.0, n)), 0, age - 18)
home = dsgen.choice(rng, ["rent", "own", "mortgage"], n, p=[0.45, 0.2, 0.35])
purpose = dsgen.choice(rng, ["car", "home_improvement", "debt_consolidation", "education", "other"], n)
open_loans = rng.poisson(2.0, n)
late = rng.poisson(0.8, n)
util = np.round(np.clip(rng.beta(2, 3, n), 0, 1), 3)
dti = np.round(np.clip(rng.normal(0.3, 0.12, n), 0.01, 0.9), 3)
z = lambda v: (v - v.mean()) / v.std()
logit = (-1.7 + 1.4 * z(late.astype(float)) + 1.3 * z(util) + 1.0 * z(dti)
         - 0.35 * z(np.log(income)) - 0.25 * z(emp) + 0.3 * (np.array(home) == "rent")
         + rng.normal(0, 0.4, n))
y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
app = pd.DataFrame({"applicant_id": ids, "age": age, "income": income, "employment_years": emp.astype(int),
                    "home": home, "purpose": purpose})
app, _ = dsgen.inject_missing(app, ["income"], 0.04, rng)
cred = pd.DataFrame({"applicant_id": ids, "open_loans": open_loans, "late_payments_12m": late,
                     "utilization": util, "debt_to_income": dti})
perm = rng.permutation(n)
te_idx, tr_idx = np.sort(perm[: int(0.3 * n)]), np.sort(perm[int(0.3 * n):])
labels = pd.DataFrame({"applicant_id": ids, "defaulted": y})

# reference model (what a reasonable analyst does)
from sklearn.impute import SimpleImputer  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.metrics import f1_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
full = pd.get_dummies(app.merge(cred, on="applicant_id"), columns=["home", "purpose"], dtype=float)
X = full.drop(columns=["applicant_id"])
m = make_pipeline(SimpleImputer(strategy="median"), StandardScaler(), LogisticRegression(max_iter=2000))
m.fit(X.iloc[tr_idx], y[tr_idx])
ref = f1_score(y[te_idx], m.predict(X.iloc[te_idx]))
p1 = y[te_idx].mean()
ones = 2 * p1 / (1 + p1)
thr = ones + 0.5 * (ref - ones)

dsgen.write_outputs(args.out, {
    "/home/user/applicants.csv": app,
    "/home/user/credit.csv": dsgen.shuffle(cred, rng),
    "/home/user/train_labels.csv": labels.iloc[tr_idx].reset_index(drop=True),
}, {"predictions": dsgen.predictions_truth(np.array(ids)[te_idx], y[te_idx], "applicant_id", "defaulted", "f1", thr,
                                           reference_f1=ref, all_ones_f1=ones)},
   {"labels.csv": labels.iloc[te_idx]})
