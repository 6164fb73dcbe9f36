"""ex-top-correlations: strongest correlates of disease progression, with
"?"-coded missing values.

VM:    /home/user/patients.csv  a bootstrap sample (280-340 rows) of sklearn's
       diabetes data (unscaled), features jittered; columns patient_id,clinic,
       age,sex,bmi,bp,s1..s6,progression; ~6% of the cells of five feature
       columns and of progression hold "?".
Truth: "top": the five features (of age..s6) with the largest absolute Pearson
       correlation with progression, pairwise-complete, columns feature,r (r
       signed, 4 dp), sorted by |r| descending.  "all": every feature's r.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
base = dsgen.load_sklearn("diabetes", scaled=False).rename(columns={"target": "progression"})
d = dsgen.sample_rows(base, int(rng.integers(280, 341)), rng, replace=True)
feats = ["age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"]
for c in ["bmi", "bp", "s1", "s2", "s3", "s6"]:
    d[c] = np.round(d[c] * rng.normal(1.0, 0.03, len(d)), 1)
d["s5"] = np.round(d["s5"] * rng.normal(1.0, 0.01, len(d)), 4)
d.insert(0, "clinic", dsgen.choice(rng, ["North", "South", "Central"], len(d)))
d.insert(0, "patient_id", dsgen.make_ids("P", len(d), rng, width=5))
num = d.copy()
cols = list(rng.choice(["bmi", "bp", "s3", "s4", "s5", "s6", "s1"], size=5, replace=False)) + ["progression"]
d, touched = dsgen.inject_missing(d, cols, 0.06, rng, marker="?")
for c, pos in touched.items():
    num.iloc[pos, num.columns.get_loc(c)] = np.nan
r = num[feats + ["progression"]].corr()["progression"].drop("progression")
top = r.reindex(r.abs().sort_values(ascending=False).index).head(5)
tdf = pd.DataFrame({"feature": top.index, "r": top.values.round(4)})
dsgen.write_outputs(args.out, {"/home/user/patients.csv": d},
                    {"top": dsgen.table_truth(tdf), "all": {k: float(v) for k, v in r.items()}})
