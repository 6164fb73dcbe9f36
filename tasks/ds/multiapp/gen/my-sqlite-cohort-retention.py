"""my-sqlite-cohort-retention: app.db (users: user_id, signup_date, plan
with 'internal' test accounts; orders: order_id, user_id, order_date,
amount) -> month-1 retention per signup cohort (Jan-Jun 2024): an .xlsx
sheet and a line chart.

A user of cohort M is retained when they placed at least one order in the
calendar month after M. Internal accounts are excluded.

truth: retention = {columns: cohort, users, retained, retention_pct; rows}
by cohort; chart = line chart spec.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen

args = dsgen.parse_args(extra={"users": 700})
rng = dsgen.np_rng(args.seed)
n = args.users
signup = dsgen.fake_dates(rng, n, "2024-01-01", "2024-06-30")
plan = np.array(dsgen.choice(rng, ["free", "pro", "team", "internal"], n, p=[0.55, 0.27, 0.12, 0.06]), dtype=object)
users = pd.DataFrame({"user_id": np.arange(1, n + 1), "signup_date": signup.dt.strftime("%Y-%m-%d"), "plan": plan})
cm = signup.dt.month.to_numpy()
base = rng.uniform(0.25, 0.6, size=6)  # cohort-specific propensity
rows = []
for u, sd, m, p in zip(users.user_id, signup, cm, plan):
    prob = base[m - 1] * (1.6 if p == "internal" else 1.0)
    k = int(rng.poisson(2.5 * prob))
    for _ in range(k):
        d = sd + pd.Timedelta(days=int(rng.integers(0, 100)))
        rows.append((int(u), d.strftime("%Y-%m-%d"), round(float(rng.lognormal(3.3, 0.5)), 2)))
orders = pd.DataFrame(rows, columns=["user_id", "order_date", "amount"])
orders = dsgen.shuffle(orders, rng)
orders.insert(0, "order_id", np.arange(1, len(orders) + 1))
real = users[users.plan != "internal"].copy()
real["cohort"] = real.signup_date.str[:7]
nxt = {f"2024-{m:02d}": f"2024-{m + 1:02d}" for m in range(1, 7)}
om = orders.assign(month=orders.order_date.str[:7])
pairs = set(zip(om.user_id, om.month))
real["ret"] = [(u, nxt[c]) in pairs for u, c in zip(real.user_id, real.cohort)]
t = real.groupby("cohort").agg(users=("user_id", "size"), retained=("ret", "sum")).reset_index()
t["retained"] = t.retained.astype(int)
t["retention_pct"] = (100 * t.retained / t.users).round(1)
truth = {"retention": dsgen.table_truth(t),
         "chart": {"kind": "line", "title": "Month-1 retention by signup cohort", "xlabel": "Cohort",
                   "ylabel": "Retention (%)", "values": [float(v) for v in t.retention_pct]}}
schema = {"users": "CREATE TABLE users (user_id INTEGER PRIMARY KEY, signup_date TEXT, plan TEXT)",
          "orders": "CREATE TABLE orders (order_id INTEGER PRIMARY KEY, user_id INTEGER REFERENCES users, order_date TEXT, amount REAL)"}
db = dsgen.sqlite_bytes({"users": dsgen.shuffle(users, rng), "orders": orders}, schema)
dsgen.write_outputs(args.out, {"/home/user/app.db": db}, truth)
