"""report-clean-dictionary: a messy patient-visit export built from
scikit-learn's diabetes data (unscaled) -> a cleaned CSV and a data
dictionary CSV.

Defects: exact duplicate rows, visit dates in three formats (ISO, day-first
DD/MM/YYYY, "Mon DD YYYY"), sex written as m/F/" M "..., missing bmi and
blood pressure.
truth: cleaned = the clean table (patient_id order of first occurrence);
dictionary = {column, missing, unique} of the cleaned table.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
from sklearn.datasets import load_diabetes
import dsgen

args = dsgen.parse_args(extra={"rows": 260})
rng = dsgen.np_rng(args.seed)
d = load_diabetes(scaled=False, as_frame=True).frame
d = dsgen.sample_rows(d, args.rows, rng, replace=False)
clean = pd.DataFrame({
    "patient_id": dsgen.make_ids("P", args.rows, rng, width=5),
    "visit_date": dsgen.fake_dates(rng, args.rows, "2023-01-01", "2024-06-30").dt.strftime("%Y-%m-%d"),
    "sex": d["sex"].map({1.0: "F", 2.0: "M"}).values,
    "age": d["age"].astype(int).values,
    "bmi": d["bmi"].round(1).values,
    "bp": d["bp"].round(0).astype(int).values,
    "glucose": d["s6"].astype(int).values,
    "progression": d["target"].astype(int).values,
})
clean, _ = dsgen.inject_missing(clean, ["bmi"], float(rng.uniform(0.03, 0.08)), rng)
clean, _ = dsgen.inject_missing(clean, ["bp"], float(rng.uniform(0.02, 0.05)), rng)
messy = clean.copy()
messy["visit_date"], _ = dsgen.mix_date_formats(pd.to_datetime(clean["visit_date"]), rng,
                                                formats=("%Y-%m-%d", "%d/%m/%Y", "%b %d %Y"),
                                                p=(0.5, 0.3, 0.2))
messy["sex"], _ = dsgen.mislabel_categories(messy["sex"], 0.2, rng,
                                            {"F": ["f", " F", "F "], "M": ["m", " M", "M "]})
messy, _ = dsgen.inject_duplicates(messy, int(rng.integers(8, 20)), rng)
# pandas writes the NaN-holding int column "bp" as float: keep it integer text
messy["bp"] = messy["bp"].map(lambda v: "" if pd.isna(v) else str(int(v)))
dic = pd.DataFrame({"column": list(clean.columns),
                    "missing": [int(clean[c].isna().sum()) for c in clean.columns],
                    "unique": [int(clean[c].nunique(dropna=True)) for c in clean.columns]})
truth = {"cleaned": dsgen.table_truth(clean), "dictionary": dsgen.table_truth(dic),
         "n_messy": int(len(messy))}
dsgen.write_outputs(args.out, {"/home/user/visits_raw.csv": messy}, truth)
