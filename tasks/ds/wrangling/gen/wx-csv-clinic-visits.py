"""wx-csv-clinic-visits: clinic visits to clean and join with the patient
register.

VM:    /home/user/visits.csv  visit_id, patient_id, clinic, visit_date, weight
       defects: clinic names with stray case/spaces ("riverside ", " RIVERSIDE");
       visit_date as YYYY-MM-DD, DD/MM/YYYY or "Month DD, YYYY"; weight as
       text with a unit ("71.4 kg", "157.2 lb", "71.4kg", "157.2 LB"),
       missing as "N/A", "-" or empty; ~5% exact duplicate rows.
       /home/user/patients.csv  patient_id, sex, birth_year.
Truth: "visits": ds_table {visit_id, patient_id, sex, clinic (Title case),
       visit_date (ISO), weight_kg (1 dp, empty when missing)}, one row per
       distinct visit.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

LB = 0.45359237
args = dsgen.parse_args(extra={"rows": 300})
rng = dsgen.np_rng(args.seed)
npat = 90
pids = dsgen.make_ids("P", npat, rng, width=5)
sex = dsgen.choice(rng, ["F", "M"], npat)
patients = pd.DataFrame({"patient_id": pids, "sex": sex, "birth_year": rng.integers(1940, 2006, npat)})
base_kg = np.where(np.array(sex) == "F", rng.normal(66, 9, npat), rng.normal(80, 10, npat))
clinics = ["Riverside", "Hillcrest", "Lakeview", "Northgate"]
n = args.rows
pi = rng.integers(0, npat, n)
dates = dsgen.fake_dates(rng, n, "2024-01-01", "2024-12-31")
shown_d, _ = dsgen.mix_date_formats(dates, rng, formats=("%Y-%m-%d", "%d/%m/%Y", "%B %d, %Y"), p=[0.5, 0.3, 0.2])
clinic = dsgen.choice(rng, clinics, n)
shown_c = []
for c in clinic:
    v = c
    if rng.random() < 0.3:
        v = [c.lower(), c.upper()][int(rng.integers(2))]
    if rng.random() < 0.2:
        v = [" " + v, v + " ", " " + v + " "][int(rng.integers(3))]
    shown_c.append(v)
w_txt, w_kg = [], []
for i in range(n):
    kg = round(float(base_kg[pi[i]] + rng.normal(0, 1.5)), 1)
    if rng.random() < 0.07:
        w_txt.append(["N/A", "-", ""][int(rng.integers(3))])
        w_kg.append(None)
        continue
    sep = " " if rng.random() < 0.7 else ""
    if rng.random() < 0.3:
        lb = round(kg / LB, 1)
        w_txt.append(f"{lb}{sep}{'lb' if rng.random() < 0.7 else 'LB'}")
        w_kg.append(round(lb * LB, 1))
    else:
        w_txt.append(f"{kg}{sep}{'kg' if rng.random() < 0.8 else 'KG'}")
        w_kg.append(kg)
vids = dsgen.make_ids("V", n, rng, width=6)
visits = pd.DataFrame({"visit_id": vids, "patient_id": [pids[k] for k in pi], "clinic": shown_c,
                       "visit_date": shown_d.values, "weight": w_txt})
shown, _ = dsgen.inject_duplicates(visits, max(6, int(0.05 * n)), rng)
truth = pd.DataFrame({"visit_id": vids, "patient_id": [pids[k] for k in pi], "sex": [sex[k] for k in pi],
                      "clinic": clinic, "visit_date": dates.dt.strftime("%Y-%m-%d"), "weight_kg": w_kg})
dsgen.write_outputs(args.out, {"/home/user/visits.csv": shown, "/home/user/patients.csv": patients},
                    {"visits": dsgen.table_truth(truth), "rows": len(shown)})
