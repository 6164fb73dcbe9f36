"""mx-mp-sql-fix: clinic.db (departments: dept_id, name; appointments:
appointment_id, dept_id, patient_id, appt_date, wait_min, status in mixed
case/spaces, with exact duplicate rows from a double import) and a buggy
report.sql open in Mousepad -> fix the query, save, run it with sqlite3 into
wait_report.csv (department, appointments, mean_wait_min). A re-run on
another seed's database checks the saved query.

truth: report = {department, appointments, mean_wait_min} sorted by mean_wait_min desc.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen

DEPTS = ["Cardiology", "Dermatology", "Neurology", "Oncology", "Orthopedics", "Pediatrics", "Radiology", "Urology", "Oncology Day Unit"]
args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
k = 7
names = [DEPTS[i] for i in sorted(rng.choice(len(DEPTS), size=k, replace=False))]
depts = pd.DataFrame({"dept_id": np.arange(1, k + 1) * 10 + int(rng.integers(0, 9)), "name": names})
M = 1300
base = dict(zip(depts.dept_id, rng.uniform(8, 55, size=k)))
size = rng.dirichlet([3] * k)
size[int(rng.integers(0, k))] = 0.012  # one small department (under 20 attended in 2024)
size /= size.sum()
did = rng.choice(depts.dept_id.values, size=M, p=size)
dates = pd.to_datetime("2023-10-01") + pd.to_timedelta(rng.integers(0, 550, size=M), unit="D")
wait = np.round(np.array([base[d] for d in did]) * rng.lognormal(0, 0.45, size=M)).astype(int)
st = dsgen.choice(rng, ["attended", "no-show", "cancelled"], M, p=[0.72, 0.15, 0.13])
shown = [s if rng.random() > 0.25 else (s.upper() if rng.random() < 0.4 else s.capitalize() + " ") for s in st]
ap = pd.DataFrame({"appointment_id": np.arange(5001, 5001 + M), "dept_id": did,
                   "patient_id": rng.integers(100, 100 + k * 3, size=M), "appt_date": dates.strftime("%Y-%m-%d"),
                   "wait_min": wait, "status": shown})
clean = ap.copy()
ap, _ = dsgen.inject_duplicates(ap, 90, rng)
sel = clean[(np.array(st) == "attended") & (clean.appt_date >= "2024-01-01").values & (clean.appt_date <= "2024-12-31").values]
g = sel.merge(depts, on="dept_id").groupby("name").agg(appointments=("appointment_id", "size"), mean_wait_min=("wait_min", "mean")).reset_index()
g = g[g.appointments >= 20].rename(columns={"name": "department"})
g["mean_wait_min"] = g.mean_wait_min.round(1)
g = g.sort_values(["mean_wait_min", "department"], ascending=[False, True], kind="stable")
sql = """-- Wait-time report for the clinic board.
-- One row per department: the number of ATTENDED appointments held in 2024
-- and their mean waiting time in minutes (1 decimal), departments with at
-- least 20 such appointments only, longest mean wait first (ties by
-- department name).
-- Run: sqlite3 -header -csv /home/user/clinic.db < /home/user/report.sql > /home/user/wait_report.csv
select d.name as department,
       count(*) as appointments,
       round(avg(a.wait_min), 1) as mean_wait_min
from appointments a
join departments d on d.dept_id = a.patient_id
where a.status = 'attended'
  and a.appt_date >= '2024-01-01'
group by d.name
order by mean_wait_min;
"""
truth = {"report": dsgen.table_truth(g[["department", "appointments", "mean_wait_min"]])}
dsgen.write_outputs(args.out, {"/home/user/clinic.db": {"departments": depts, "appointments": ap},
                               "/home/user/report.sql": sql}, truth)
