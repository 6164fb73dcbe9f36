"""rw-lab-clean-dictionary: a messy lab export -> cleaned CSV + data dictionary.

Base: scikit-learn's diabetes data (unscaled) for bmi-like weight and s6 glucose.
VM:    /home/user/lab_raw.csv  sample_id,sample_date,weight,weight_unit,glucose,glucose_unit
       defects: dates as YYYY-MM-DD / DD.MM.YYYY / YYYYMMDD; weight in kg or lb;
       glucose in mmol/L or mg/dL (mg/dL = mmol/L * 18); missing weights and
       glucose; exact duplicate rows.
Truth: "cleaned": sample_id,sample_date,weight_kg,glucose_mmol (2 dp);
       "dictionary": column,non_missing,mean,min,max of weight_kg and glucose_mmol.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.datasets import load_diabetes  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
base = load_diabetes(scaled=False, as_frame=True).frame
n = int(rng.integers(180, 260))
b = dsgen.sample_rows(base, n, rng, replace=False)
h = rng.normal(1.72, 0.09, n)
kg = np.round(b["bmi"].to_numpy() * h * h, 1)
mmol = np.round(b["s6"].to_numpy() / 18.0 * rng.uniform(0.9, 1.1, n), 1)
dates = dsgen.fake_dates(rng, n, "2023-03-01", "2024-10-31")
clean = pd.DataFrame({"sample_id": dsgen.make_ids("L", n, rng, width=6),
                      "sample_date": dates.dt.strftime("%Y-%m-%d"), "weight_kg": kg, "glucose_mmol": mmol})
clean, _ = dsgen.inject_missing(clean, ["weight_kg"], float(rng.uniform(0.03, 0.07)), rng)
clean, _ = dsgen.inject_missing(clean, ["glucose_mmol"], float(rng.uniform(0.03, 0.07)), rng)
lb = rng.random(n) < 0.3
mg = rng.random(n) < 0.35
raw = pd.DataFrame({"sample_id": clean.sample_id,
                    "sample_date": dsgen.mix_date_formats(dates, rng, formats=("%Y-%m-%d", "%d.%m.%Y", "%Y%m%d"))[0],
                    "weight": np.where(lb, np.round(clean.weight_kg / 0.45359237, 1), clean.weight_kg),
                    "weight_unit": np.where(lb, "lb", "kg"),
                    "glucose": np.where(mg, np.round(clean.glucose_mmol * 18), clean.glucose_mmol),
                    "glucose_unit": np.where(mg, "mg/dL", "mmol/L")})
raw, _ = dsgen.inject_duplicates(raw, int(rng.integers(8, 16)), rng)
# truth from the written rows
ref = raw.drop_duplicates().reset_index(drop=True)
w = np.where(ref.weight_unit == "lb", ref.weight * 0.45359237, ref.weight)
g = np.where(ref.glucose_unit == "mg/dL", ref.glucose / 18.0, ref.glucose)
cl = pd.DataFrame({"sample_id": ref.sample_id, "sample_date": clean.set_index("sample_id").loc[ref.sample_id, "sample_date"].values,
                   "weight_kg": np.round(w, 2), "glucose_mmol": np.round(g, 2)})


def dic(c, wcol, gcol):
    rows = []
    for name, v in (("weight_kg", wcol), ("glucose_mmol", gcol)):
        s = pd.Series(v).dropna()
        rows.append([name, int(len(s)), round(float(s.mean()), 2), round(float(s.min()), 2), round(float(s.max()), 2)])
    return pd.DataFrame(rows, columns=["column", "non_missing", "mean", "min", "max"])


truth = {"cleaned": dsgen.table_truth(cl), "dictionary": dsgen.table_truth(dic(cl, w, g)),
         "dictionary_no_units": dsgen.table_truth(dic(cl, ref.weight, ref.glucose))}
csv = raw.to_csv(index=False, lineterminator="\n")
dsgen.write_outputs(args.out, {"/home/user/lab_raw.csv": csv}, truth)
