"""j-nb-monthly-revenue: an order export with two date formats (ISO and
DD/MM/YYYY), amounts as "$1,234.50" strings (some missing) and a status
column with stray case/whitespace; in the Jupyter notebook: completed orders
and revenue per month, and the best month.

truth: table {month, orders, revenue}; notebook contains "best month: YYYY-MM"
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_jupyter

args = dsgen.parse_args(extra={"rows": 420})
rng = dsgen.np_rng(args.seed, 23)
n = args.rows
year = int(rng.integers(2021, 2025))
start_month = int(rng.integers(1, 7))
months = int(rng.integers(5, 8))
start = pd.Timestamp(year=year, month=start_month, day=1)
end = start + pd.DateOffset(months=months)
days = (end - start).days
# each month gets its own level of activity so the best month varies
w = rng.gamma(4.0, 1.0, months)
month_of = rng.choice(months, n, p=w / w.sum())
dates = []
for m in month_of:
    ms = start + pd.DateOffset(months=int(m))
    me = ms + pd.DateOffset(months=1)
    dates.append(ms + pd.Timedelta(days=int(rng.integers(0, (me - ms).days))))
dates = pd.Series(pd.to_datetime(dates))
amount = np.round(rng.lognormal(4.6, 0.9, n), 2)
status = dsgen.choice(rng, ["completed", "cancelled", "refunded"], n, p=[0.72, 0.18, 0.10])
d = pd.DataFrame({"order_id": dsgen.make_ids("O", n, rng), "date": dates, "customer": dsgen.make_ids("C", n, rng),
                  "amount": amount, "status": status})
d = d.sort_values("date").reset_index(drop=True)
missing = rng.random(n) < 0.04
ok = (d.status == "completed") & ~missing
t = d[ok].groupby(d.date.dt.strftime("%Y-%m")).amount.agg(orders="size", revenue="sum").reset_index()
t.columns = ["month", "orders", "revenue"]
t["revenue"] = t["revenue"].round(2)
best = t.loc[t.revenue.idxmax(), "month"]
# the export's defects
iso = rng.random(n) < 0.55
out = d.copy()
out["date"] = [x.strftime("%Y-%m-%d") if i else x.strftime("%d/%m/%Y") for x, i in zip(d.date, iso)]
out["amount"] = ["" if m else "${:,.2f}".format(a) for a, m in zip(d.amount, missing)]
variants = {"completed": ["completed", "Completed", "COMPLETED", " completed", "completed "],
            "cancelled": ["cancelled", "Cancelled", " cancelled"], "refunded": ["refunded", "Refunded"]}
out["status"] = [s if rng.random() < 0.7 else variants[s][int(rng.integers(len(variants[s])))] for s in d.status]
q = ("# Monthly revenue\n\n"
     "`/home/user/orders.csv` is an order export (order_id, date, customer, amount, status). Dates are written either "
     "as YYYY-MM-DD or as DD/MM/YYYY; amounts look like `$1,234.50` and are empty when unknown; the status was typed by "
     "hand (case and surrounding spaces vary).\n\n"
     "**Question:** for the completed orders with a known amount, how many orders and how much revenue were there per "
     "calendar month? Write `/home/user/monthly.csv` with the columns `month,orders,revenue` (month as YYYY-MM, "
     "revenue rounded to 2 decimals, sorted by month) and print the month with the highest revenue as "
     "`best month: YYYY-MM`.")
files = {"/home/user/orders.csv": out, **dsgen_jupyter.vm_files(q)}
dsgen.write_outputs(args.out, files, {"table": dsgen.table_truth(t), "best": best,
                                      "notebook": {"contains": [f"best month: {best}"]}})
