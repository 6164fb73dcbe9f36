"""viz-bar-region-revenue: orders.csv -> bar chart of total revenue per region.

truth: chart = {kind, title, xlabel, ylabel, labels (regions A-Z), values (revenue)}
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen, dsgen_viz

args = dsgen.parse_args(extra={"rows": 400})
rng = dsgen.np_rng(args.seed)
df = dsgen_viz.orders(rng, args.rows, k_regions=int(rng.integers(4, 7)))
df["date"] = df["date"].dt.strftime("%Y-%m-%d")
rev = (df["units"] * df["unit_price"]).groupby(df["region"]).sum().sort_index()
truth = {"chart": {"kind": "bar", "title": "Revenue by region", "xlabel": "Region",
                   "ylabel": "Revenue (EUR)", "labels": list(rev.index),
                   "values": dsgen_viz.rounded(rev.values)}}
dsgen.write_outputs(args.out, {"/home/user/orders.csv": df}, truth)
