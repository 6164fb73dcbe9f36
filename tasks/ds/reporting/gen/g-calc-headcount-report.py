"""g-calc-headcount-report: staff.xlsx with sheet "Staff" (employee_id,
department, status active/left in mixed case, salary) and sheet "Report"
(five departments in A2:A6, empty headcount / mean_salary /
payroll_share_pct) -> fill the report for active staff only in Calc.

truth: report = {columns: department, headcount, mean_salary, payroll_share_pct; rows}.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_gui

DEPTS = {"Engineering": 68000, "Sales": 52000, "Finance": 58000, "Support": 41000, "Marketing": 50000,
         "Legal": 72000, "Operations": 46000, "Research": 64000}
args = dsgen.parse_args(extra={"rows": 150})
rng = dsgen.np_rng(args.seed)
depts = [list(DEPTS)[i] for i in sorted(rng.choice(len(DEPTS), size=5, replace=False))]
n = args.rows
dep = dsgen.choice(rng, depts, n, p=list(rng.dirichlet([4] * 5)))
active = rng.random(n) < 0.78
status = np.where(active, "active", "left").astype(object)
for i in rng.choice(n, size=n // 6, replace=False):
    status[i] = status[i].capitalize() if rng.random() < 0.6 else status[i].upper()
salary = np.round(np.array([DEPTS[d] for d in dep]) * rng.lognormal(0, 0.18, size=n) / 100) * 100
df = pd.DataFrame({"employee_id": dsgen.make_ids("E", n, rng, width=4), "department": dep,
                   "status": status, "salary": salary})
act = df[active]
tot = act.salary.sum()
rows = []
for d in depts:
    a = act[act.department == d]
    rows.append([d, int(len(a)), round(float(a.salary.mean()), 2), round(float(100 * a.salary.sum() / tot), 1)])
report = pd.DataFrame({"department": depts, "headcount": [None] * 5, "mean_salary": [None] * 5,
                       "payroll_share_pct": [None] * 5})
truth = {"report": {"columns": ["department", "headcount", "mean_salary", "payroll_share_pct"], "rows": rows}}
dsgen.write_outputs(args.out, {"/home/user/staff.xlsx": dsgen_gui.xlsx_bytes({"Staff": df, "Report": report}),
                               **dsgen_gui.calc_vm_files("g-calc-headcount-report")}, truth)
