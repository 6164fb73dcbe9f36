"""ry-patients-clean-workbook: a messy patient export built from
scikit-learn's diabetes data (unscaled) -> a cleaned table and a data
dictionary, as two sheets of one .xlsx workbook.

VM:    /home/user/patients_raw.csv
       patient_id,visit_date,age,sex,bmi,bp,glucose,progression
       sex as F/M, female/male or 1/2 (1 = F, 2 = M); bmi sometimes with a
       decimal comma ('27,3'); bp missing as 'n/a'; visit_date YYYY-MM-DD;
       some patients re-submitted: several rows per patient_id, of which
       the one with the latest visit_date is valid.
Truth: "data" (the cleaned rows, sorted by patient_id) and "dictionary"
       (column,non_missing,mean,min,max for age,bmi,bp,glucose,progression).
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.datasets import load_diabetes  # noqa: E402

args = dsgen.parse_args(extra={"rows": 220})
rng = dsgen.np_rng(args.seed)
b = load_diabetes(scaled=False, as_frame=True).frame
base = dsgen.sample_rows(b, args.rows, rng, replace=False)
n = len(base)
clean = pd.DataFrame({"patient_id": dsgen.make_ids("P", n, rng, width=5),
                      "visit_date": dsgen.fake_dates(rng, n, "2024-01-01", "2024-10-31").dt.strftime("%Y-%m-%d"),
                      "age": base.age.astype(int).values,
                      "sex": np.where(base.sex.values == 1, "F", "M"),
                      "bmi": np.round(base.bmi.values, 1),
                      "bp": np.round(base.bp.values, 0),
                      "glucose": base.s6.astype(float).values,
                      "progression": base.target.astype(float).values})
miss = rng.choice(n, size=int(n * 0.06), replace=False)
clean.loc[miss, "bp"] = np.nan
# stale earlier submissions of some patients (different values, earlier dates)
k = int(rng.integers(15, 30))
src = rng.choice(n, size=k, replace=False)
stale = clean.iloc[src].copy()
stale["visit_date"] = [(pd.Timestamp(v) - pd.Timedelta(days=int(rng.integers(3, 60)))).strftime("%Y-%m-%d") for v in stale.visit_date]
stale["bmi"] = np.round(stale.bmi * rng.uniform(0.85, 1.15, size=k), 1)
stale["glucose"] = np.round(stale.glucose * rng.uniform(0.8, 1.2, size=k))
raw = dsgen.shuffle(pd.concat([clean, stale], ignore_index=True), rng)


def sex_txt(s):
    r = rng.random()
    return s if r < 0.5 else ("female" if s == "F" else "male") if r < 0.75 else ("1" if s == "F" else "2")


raw["sex"] = [sex_txt(s) for s in raw.sex]
raw["bmi"] = [f"{v:.1f}".replace(".", ",") if rng.random() < 0.25 else f"{v:.1f}" for v in raw.bmi]
raw["bp"] = ["n/a" if pd.isna(v) else f"{v:.0f}" for v in raw.bp]
raw["glucose"] = [f"{v:.0f}" for v in raw.glucose]
raw["progression"] = [f"{v:.0f}" for v in raw.progression]
data = clean.sort_values("patient_id").reset_index(drop=True)
num = ["age", "bmi", "bp", "glucose", "progression"]
dic = pd.DataFrame({"column": num, "non_missing": [int(data[c].notna().sum()) for c in num],
                    "mean": [round(float(data[c].mean()), 2) for c in num],
                    "min": [float(data[c].min()) for c in num], "max": [float(data[c].max()) for c in num]})
dsgen.write_outputs(args.out, {"/home/user/patients_raw.csv": raw},
                    {"data": dsgen.table_truth(data), "dictionary": dsgen.table_truth(dic)})
