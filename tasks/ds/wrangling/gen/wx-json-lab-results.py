"""wx-json-lab-results: nested lab-result export (JSON) to a per-site summary.

VM:    /home/user/lab_results.json  a list of samples {sample_id, patient
       {id, site}, collected, analyte, value, unit}.  Defects: collected
       dates in three formats (YYYY-MM-DD, DD/MM/YYYY, "Mon DD YYYY");
       analyte names with stray case/spaces; values in mmol/L or mg/dL;
       some values are strings ("5.4"), some missing ("N/A", "-", "", null);
       ~6% of the samples submitted twice (identical records).
Truth: "summary": ds_table {site, analyte (lower case), n, mean_mmol_l (3 dp)}
       over distinct samples with a value collected 2024-01-01..2024-06-30,
       mg/dL converted with glucose 18.016, cholesterol 38.67,
       triglycerides 88.57.
"""
import json
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

F = {"glucose": 18.016, "cholesterol": 38.67, "triglycerides": 88.57}
MU = {"glucose": (5.6, 1.1), "cholesterol": (5.0, 0.9), "triglycerides": (1.7, 0.5)}
args = dsgen.parse_args(extra={"rows": 320})
rng = dsgen.np_rng(args.seed)
n = args.rows
sites = dsgen.fake_cities(rng, 4)
npat = 70
pat_ids = dsgen.make_ids("P", npat, rng, width=4)
pat_site = dsgen.choice(rng, sites, npat)
dates = dsgen.fake_dates(rng, n, "2023-10-01", "2024-09-30")
shown_dates, _ = dsgen.mix_date_formats(dates, rng, formats=("%Y-%m-%d", "%d/%m/%Y", "%b %d %Y"), p=[0.45, 0.35, 0.2])
sample_ids = dsgen.make_ids("LAB", n, rng, width=6)
variants = {"glucose": ["Glucose", "GLUCOSE", " glucose", "glucose "],
            "cholesterol": ["Cholesterol", "CHOLESTEROL ", " cholesterol"],
            "triglycerides": ["Triglycerides", "TRIGLYCERIDES", "triglycerides "]}
recs, ref = [], []
for i in range(n):
    a = dsgen.choice(rng, list(F), 1, p=[0.45, 0.35, 0.2])[0]
    mmol = max(0.3, rng.normal(*MU[a]))
    mg = rng.random() < 0.4
    val = round(mmol * F[a], 1) if mg else round(mmol, 2)
    shown_a = variants[a][int(rng.integers(len(variants[a])))] if rng.random() < 0.3 else a
    r = rng.random()
    if r < 0.07:
        shown_v = ["N/A", "-", "", None][int(rng.integers(4))]
        ok = False
    elif r < 0.17:
        shown_v = f"{val}"
        ok = True
    else:
        shown_v = val
        ok = True
    p = int(rng.integers(npat))
    recs.append({"sample_id": sample_ids[i], "patient": {"id": pat_ids[p], "site": pat_site[p]},
                 "collected": shown_dates.iloc[i], "analyte": shown_a, "value": shown_v,
                 "unit": "mg/dL" if mg else "mmol/L"})
    if ok:
        ref.append({"site": pat_site[p], "analyte": a, "date": dates.iloc[i],
                    "mmol": val / F[a] if mg else val})
# duplicates: identical records, each after its original
ndup = max(4, int(0.06 * n))
src = sorted(rng.choice(n, size=ndup, replace=False).tolist())
order = list(range(n))
for j, s in enumerate(src):
    order.insert(int(rng.integers(order.index(s) + 1, len(order) + 1)), n + j)
allrecs = recs + [json.loads(json.dumps(recs[s])) for s in src]
out = [allrecs[k] for k in order]

d = pd.DataFrame(ref)
d = d[(d.date >= "2024-01-01") & (d.date <= "2024-06-30")]
g = d.groupby(["site", "analyte"]).agg(n=("mmol", "size"), mean_mmol_l=("mmol", "mean")).reset_index()
g["mean_mmol_l"] = g["mean_mmol_l"].round(3)
dsgen.write_outputs(args.out, {"/home/user/lab_results.json": json.dumps(out, indent=1) + "\n"},
                    {"summary": dsgen.table_truth(g), "records": len(out), "duplicates": ndup})
