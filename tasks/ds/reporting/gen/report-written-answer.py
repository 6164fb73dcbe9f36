"""report-written-answer: a seed-drawn sample of scikit-learn's diabetes data
(unscaled, columns renamed) -> a written conclusion whose last number is the
Pearson correlation between BMI and disease progression among patients aged
50 or over, rounded to 3 decimals.

truth: r = the correlation (rounded to 3 dp); r_all (all ages) for the record.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
from sklearn.datasets import load_diabetes
import dsgen

args = dsgen.parse_args(extra={"rows": 220})
rng = dsgen.np_rng(args.seed)
full = load_diabetes(scaled=False, as_frame=True).frame
# redraw (deterministically) until the 50+ answer is clearly apart from the
# all-ages one and from the full data's value, so neither passes by chance
for attempt in range(50):
    d = dsgen.sample_rows(full, args.rows, rng, replace=False)
    df = pd.DataFrame({
        "age": d["age"].astype(int).values,
        "sex": d["sex"].map({1.0: "F", 2.0: "M"}).values,
        "bmi": np.round(d["bmi"].values * rng.normal(1.0, 0.03, size=len(d)), 1),
        "bp": d["bp"].round(1).values,
        "cholesterol": d["s1"].astype(int).values,
        "glucose": d["s6"].astype(int).values,
        "progression": d["target"].astype(int).values,
    })
    old = df[df["age"] >= 50]
    r = float(np.corrcoef(old["bmi"], old["progression"])[0, 1])
    r_all = float(np.corrcoef(df["bmi"], df["progression"])[0, 1])
    if abs(r - r_all) >= 0.01 and abs(r - 0.586) >= 0.01:
        break
truth = {"r": round(r, 3), "r_all": round(r_all, 3), "n_50plus": int(len(old))}
dsgen.write_outputs(args.out, {"/home/user/patients.csv": df}, truth)
