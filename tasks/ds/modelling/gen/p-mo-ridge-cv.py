"""p-mo-ridge-cv: choose Ridge's alpha by 5-fold cross-validation.

VM:    /home/user/diabetes_train.csv  patient_id, the 10 standardised
       diabetes features, 12 noise measurements m01..m12, progression.
       A seeded sample of 300 of sklearn's 442 patients.
Truth: "cv": ds_table {alpha, mean_rmse} for alphas 0.1 1 3 10 30 100 300:
       pipeline StandardScaler + Ridge(alpha), KFold(5) without shuffling,
       RMSE per fold averaged; "best_alpha": the alpha with the lowest mean.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402

ALPHAS = [0.1, 1, 3, 10, 30, 100, 300]
args = dsgen.parse_args(extra={"rows": 300})
rng = dsgen.np_rng(args.seed)
d = dsgen.sample_rows(dsgen.load_sklearn("diabetes"), args.rows, rng, replace=False)
d = d.rename(columns={"target": "progression"})
feats = [c for c in d.columns if c != "progression"]
d[feats] = np.round(d[feats] * 100, 3)
for j in range(1, 13):
    d[f"m{j:02d}"] = np.round(rng.normal(50, 10, len(d)), 2)
d.insert(0, "patient_id", dsgen.make_ids("P", len(d), rng, width=5))
d = d[[c for c in d.columns if c != "progression"] + ["progression"]]

from sklearn.linear_model import Ridge  # noqa: E402
from sklearn.model_selection import KFold, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
X, y = d.drop(columns=["patient_id", "progression"]), d.progression
rows = []
for a in ALPHAS:
    s = cross_val_score(make_pipeline(StandardScaler(), Ridge(alpha=a)), X, y, cv=KFold(5),
                        scoring="neg_root_mean_squared_error")
    rows.append([a, round(float(-s.mean()), 3)])
best = min(rows, key=lambda r: r[1])[0]
dsgen.write_outputs(args.out, {"/home/user/diabetes_train.csv": d},
                    {"cv": {"columns": ["alpha", "mean_rmse"], "rows": rows}, "best_alpha": best})
