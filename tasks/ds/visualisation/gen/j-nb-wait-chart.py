"""j-nb-wait-chart: clinic visits with waiting times (some missing, some
negative clock errors); in the Jupyter notebook: a bar chart of the median
valid wait per clinic, saved as SVG.

truth: chart {kind bar, title, xlabel, ylabel, labels, values}
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_jupyter

args = dsgen.parse_args(extra={"rows": 500})
rng = dsgen.np_rng(args.seed, 53)
n = args.rows
clinics = dsgen.fake_cities(rng, int(rng.integers(5, 8)))
level = dict(zip(clinics, rng.uniform(8, 60, len(clinics))))
c = dsgen.choice(rng, clinics, n)
wait = np.round([rng.gamma(3.0, level[x] / 3.0) for x in c], 1)
d = pd.DataFrame({"visit_id": dsgen.make_ids("V", n, rng), "date": dsgen.fake_dates(rng, n, "2024-01-01", "2024-06-30"),
                  "clinic": c, "wait_min": wait})
d["date"] = d["date"].dt.strftime("%Y-%m-%d")
bad = rng.random(n)
d.loc[bad < 0.05, "wait_min"] = np.nan
d.loc[(bad >= 0.05) & (bad < 0.09), "wait_min"] = -np.round(rng.uniform(1, 30, int(((bad >= 0.05) & (bad < 0.09)).sum())), 1)
v = d[d.wait_min >= 0]
med = v.groupby("clinic").wait_min.median().sort_index()
chart = {"kind": "bar", "title": "Median wait by clinic", "xlabel": "Clinic", "ylabel": "Median wait (min)",
         "labels": list(med.index), "values": [round(float(x), 3) for x in med.values]}
q = ("# Waiting times\n\n"
     "`/home/user/visits.csv` lists clinic visits (visit_id, date, clinic, wait_min). Some waiting times are missing "
     "and some are negative (clock errors): leave both out.\n\n"
     "**Chart:** make a matplotlib bar chart of the median waiting time per clinic, one bar per clinic in "
     "alphabetical order of the clinic name, with the title `Median wait by clinic`, the x-axis label `Clinic` and "
     "the y-axis label `Median wait (min)`, and save it as `/home/user/wait_by_clinic.svg`.")
files = {"/home/user/visits.csv": d, **dsgen_jupyter.vm_files(q)}
dsgen.write_outputs(args.out, files, {"chart": chart, "notebook": {"contains": []}})
