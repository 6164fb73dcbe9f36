"""j-nb-bmi-by-sex: diabetes patients with missing bmi and duplicated rows;
in the Jupyter notebook, per sex: n, mean bmi, median blood pressure.

truth: table {sex, n, mean_bmi, median_bp}
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
from sklearn.datasets import load_diabetes
import dsgen, dsgen_jupyter

args = dsgen.parse_args(extra={"rows": 260})
rng = dsgen.np_rng(args.seed, 11)
raw = load_diabetes(as_frame=True, scaled=False).frame
d = raw.iloc[rng.choice(len(raw), args.rows, replace=False)].reset_index(drop=True)
d = pd.DataFrame({
    "patient_id": dsgen.make_ids("P", len(d), rng),
    "age": d["age"].astype(int),
    "sex": np.where(d["sex"] == 1, "F", "M"),
    "bmi": (d["bmi"] + rng.normal(0, 0.4, len(d))).round(1),
    "bp": (d["bp"] + rng.normal(0, 1.5, len(d))).round(1),
    "glucose": d["s6"].astype(float),
})
d.loc[rng.choice(len(d), int(0.06 * len(d)), replace=False), "bmi"] = np.nan
clean = d.dropna(subset=["bmi"])
g = clean.groupby("sex").agg(n=("bmi", "size"), mean_bmi=("bmi", "mean"), median_bp=("bp", "median")).reset_index()
g["mean_bmi"] = g["mean_bmi"].round(2)
g["median_bp"] = g["median_bp"].round(2)
messy, _ = dsgen.inject_duplicates(d, int(rng.integers(8, 15)), rng)
q = ("# Blood pressure and BMI by sex\n\n"
     "`/home/user/patients.csv` lists diabetes patients (patient_id, age, sex, bmi, bp, glucose). "
     "Some rows were entered twice and some bmi values are missing.\n\n"
     "**Question:** after dropping exact duplicate rows and the rows without a bmi, how many patients of each sex "
     "are there, what is their mean bmi and their median bp? Write the answer to `/home/user/bmi_by_sex.csv` with "
     "the columns `sex,n,mean_bmi,median_bp` (means and medians rounded to 2 decimals, one row per sex).")
files = {"/home/user/patients.csv": messy, **dsgen_jupyter.vm_files(q)}
dsgen.write_outputs(args.out, files, {"table": dsgen.table_truth(g), "n_rows": len(messy), "notebook": {"contains": []}})
