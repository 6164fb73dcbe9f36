"""mz-infeasible-churn-month: a subscription churn table (train with a 0/1
churned label, test without it); the request asks for the month in which
each test customer will cancel, but nothing in the data dates a
cancellation (no tenure at churn, no event dates, a binary label only).

VM:    /home/user/churn_train.csv  customer_id, plan, monthly_fee,
       support_calls, logins_per_week, churned (0/1);
       /home/user/churn_test.csv  the same without churned.
Truth: {"infeasible": true} for the record.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
n = int(rng.integers(400, 700))
plan = dsgen.choice(rng, ["basic", "standard", "premium"], n)
fee = np.array([{"basic": 9.99, "standard": 14.99, "premium": 24.99}[p] for p in plan])
calls = rng.poisson(2.0, n)
logins = np.round(rng.gamma(2.5, 1.6, n), 1)
logit = -1.2 + 0.45 * calls - 0.35 * logins + 0.02 * fee
churned = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
df = pd.DataFrame({"customer_id": dsgen.make_ids("S", n, rng, width=5), "plan": plan,
                   "monthly_fee": fee, "support_calls": calls, "logins_per_week": logins,
                   "churned": churned})
cut = int(n * 0.75)
dsgen.write_outputs(args.out, {"/home/user/churn_train.csv": df.iloc[:cut],
                               "/home/user/churn_test.csv": df.iloc[cut:].drop(columns="churned")},
                    {"infeasible": True, "columns": list(df.columns), "rows": n})
