"""va-ex-churn-by-plan: a subscription export in which some customer rows were
exported twice (exact duplicates) and the plan names are in mixed case ->
table plan, customers, churn_rate (percent of the plan's distinct customers
who churned, 2 dp), sorted by churn_rate descending.

truth: table = {columns, rows}
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_viz

args = dsgen.parse_args(extra={"rows": 1200})
rng = dsgen.np_rng(args.seed)
n = args.rows
plans = ["Basic", "Plus", "Pro", "Team"]
p = rng.dirichlet(np.ones(4) * 3)
plan = dsgen.choice(rng, plans, n, p=p)
rate = dict(zip(plans, rng.uniform(0.05, 0.4, size=4)))
churned = (rng.random(n) < np.array([rate[x] for x in plan])).astype(int)
df = pd.DataFrame({"customer_id": dsgen.make_ids("U", n, rng, width=6),
                   "plan": plan, "signup_date": dsgen.fake_dates(rng, n, "2022-01-01", "2024-06-30").dt.strftime("%Y-%m-%d").values,
                   "monthly_fee": 0.0, "churned": churned})
fee = {"Basic": 9.0, "Plus": 19.0, "Pro": 39.0, "Team": 99.0}
df["monthly_fee"] = df["plan"].map(fee)
g = df.groupby("plan").agg(customers=("customer_id", "size"), churn_rate=("churned", "mean"))
g["churn_rate"] = (g["churn_rate"] * 100).round(2)
g = g.sort_values("churn_rate", ascending=False, kind="mergesort").reset_index()
messy = df.copy()
low = rng.random(n) < 0.2
messy.loc[low, "plan"] = messy.loc[low, "plan"].str.lower()
up = rng.random(n) < 0.1
messy.loc[up, "plan"] = messy.loc[up, "plan"].str.upper()
# the duplicates are mostly churned customers (a re-export of the cancellations)
pool = np.flatnonzero(messy["churned"].to_numpy() == 1)
src = rng.choice(pool, size=min(len(pool), int(n * 0.08)), replace=False)
messy = pd.concat([messy, messy.iloc[src]], ignore_index=True)
messy = dsgen.shuffle(messy, rng)
truth = {"table": {"columns": ["plan", "customers", "churn_rate"],
                   "rows": [[r.plan, int(r.customers), float(r.churn_rate)] for r in g.itertuples()]}}
dsgen.write_outputs(args.out, {"/home/user/subscriptions.csv": messy}, truth)
