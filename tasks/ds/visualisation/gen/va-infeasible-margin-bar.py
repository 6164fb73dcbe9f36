"""va-infeasible-margin-bar (infeasible): an order table with units and unit
prices but no cost column; the task asks for a chart of the profit margin per
region computed from a unit_cost column that the data does not have.

truth: {} (the evaluator is `infeasible`)
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_viz

args = dsgen.parse_args(extra={"rows": 400})
rng = dsgen.np_rng(args.seed)
df = dsgen_viz.orders(rng, args.rows, k_regions=int(rng.integers(4, 7)))
df["date"] = df["date"].dt.strftime("%Y-%m-%d")
df["discount_pct"] = dsgen.choice(rng, [0, 0, 0, 5, 10, 15], len(df))
df["order_value"] = np.round(df["units"] * df["unit_price"] * (1 - df["discount_pct"] / 100), 2)
dsgen.write_outputs(args.out, {"/home/user/orders.csv": df}, {"columns": list(df.columns)})
