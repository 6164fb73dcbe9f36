"""g-mp-config-pipeline: orders.csv (order_id, date, region, category,
amount, status in messy case), a reporting script pipeline.py driven by
pipeline.ini (filters, grouping, metric, output path) -> edit pipeline.ini
in Mousepad for the requested report, run the pipeline in the terminal.

truth: report = {columns: category, amount_mean; rows} for completed orders
dated 2024-04-01..2024-06-30, 2 dp.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen

CATS = ["books", "garden", "toys", "kitchen", "sports", "music", "office"]
args = dsgen.parse_args(extra={"rows": 400})
rng = dsgen.np_rng(args.seed)
n = args.rows
cats = [CATS[i] for i in sorted(rng.choice(len(CATS), size=5, replace=False))]
st = np.array(dsgen.choice(rng, ["completed", "cancelled", "returned"], n, p=[0.7, 0.2, 0.1]), dtype=object)
df = pd.DataFrame({"order_id": dsgen.make_ids("A", n, rng, width=6),
                   "date": dsgen.fake_dates(rng, n, "2024-01-01", "2024-12-31").dt.strftime("%Y-%m-%d"),
                   "region": dsgen.choice(rng, ["North", "South", "East", "West"], n),
                   "category": dsgen.choice(rng, cats, n),
                   "amount": np.round(rng.lognormal(3.6, 0.6, size=n), 2)})
for i in rng.choice(n, size=n // 5, replace=False):
    st[i] = st[i].capitalize() if rng.random() < 0.5 else st[i].upper() + " "
df["status"] = st
ok = (df.status.str.strip().str.lower() == "completed") & (df.date >= "2024-04-01") & (df.date <= "2024-06-30")
rep = df[ok].groupby("category").amount.mean().round(2)
truth = {"report": {"columns": ["category", "amount_mean"], "rows": [[c, float(v)] for c, v in rep.items()]}}
ini = """# Settings of pipeline.py (see the docstring at the top of pipeline.py)
[filter]
region = ALL
status = ALL
start_date = 2024-01-01
end_date = 2024-12-31

[output]
group_by = region
metric = sum
path = /home/user/report.csv
"""
pipeline = '''"""Aggregates /home/user/orders.csv as pipeline.ini says.

[filter]  region: a region name or ALL; status: an order status (compared
          case-insensitively, spaces ignored) or ALL; start_date, end_date:
          YYYY-MM-DD, both inclusive.
[output]  group_by: a column of orders.csv; metric: sum, mean, median or
          count (of amount); path: the CSV written, with the columns
          <group_by>,amount_<metric> (2 decimals).
"""
import configparser
import pandas as pd

c = configparser.ConfigParser()
c.read("/home/user/pipeline.ini")
f, o = c["filter"], c["output"]
d = pd.read_csv("/home/user/orders.csv")
if f.get("region", "ALL") != "ALL":
    d = d[d.region == f["region"]]
if f.get("status", "ALL") != "ALL":
    d = d[d.status.str.strip().str.lower() == f["status"].strip().lower()]
d = d[(d.date >= f["start_date"]) & (d.date <= f["end_date"])]
r = d.groupby(o["group_by"]).amount.agg(o["metric"]).round(2)
r.rename("amount_" + o["metric"]).reset_index().to_csv(o["path"], index=False)
print("wrote", o["path"], len(r), "rows")
'''
dsgen.write_outputs(args.out, {"/home/user/orders.csv": df, "/home/user/pipeline.ini": ini,
                               "/home/user/pipeline.py": pipeline}, truth)
