"""ry-infeasible-yoy-answer: sales.csv with the orders of 2024 only -- the
data for the infeasible request to state Q2 2024 revenue growth over Q2
2023 (there is no 2023 data).

truth: {"rows": n, "q2_2024": revenue} for the record (infeasible).
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_viz

args = dsgen.parse_args(extra={"rows": 600})
rng = dsgen.np_rng(args.seed)
o = dsgen_viz.orders(rng, args.rows, start="2024-01-01", end="2024-12-31").sort_values("date").reset_index(drop=True)
o["amount"] = (o.units * o.unit_price).round(2)
o["order_date"] = o.date.dt.strftime("%Y-%m-%d")
out = o[["order_id", "order_date", "region", "product", "amount"]]
q2 = float(out[(out.order_date >= "2024-04-01") & (out.order_date <= "2024-06-30")].amount.sum())
dsgen.write_outputs(args.out, {"/home/user/sales.csv": out}, {"rows": int(len(out)), "q2_2024": round(q2, 2)})
