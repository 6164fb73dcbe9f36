"""va-grouped-bar-region-year: orders over 2023-2024 with a status column ->
grouped bar chart of completed revenue (units * unit_price) per region
(alphabetical), one bar per year (2023 left, 2024 right).

truth: chart = {kind bar, title, xlabel, ylabel, labels (regions), series 2,
values (interleaved: region1 2023, region1 2024, region2 2023, ...)}
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_viz

args = dsgen.parse_args(extra={"rows": 700})
rng = dsgen.np_rng(args.seed)
df = dsgen_viz.orders(rng, args.rows, k_regions=int(rng.integers(4, 7)),
                      start="2023-01-01", end="2024-12-31")
# regions grow (or shrink) differently between the years
growth = {r: float(rng.uniform(0.5, 1.9)) for r in df["region"].unique()}
is24 = df["date"].dt.year == 2024
df.loc[is24, "units"] = np.maximum(1, np.round(df.loc[is24, "units"] * df.loc[is24, "region"].map(growth))).astype(int)
p_bad = rng.uniform(0.12, 0.25)
df["status"] = dsgen.choice(rng, ["completed", "refunded", "cancelled"], len(df),
                            p=[1 - p_bad, p_bad * 0.6, p_bad * 0.4])
# refunds and cancellations are bigger orders than average (so including them changes the picture)
bad = df["status"] != "completed"
df.loc[bad, "units"] = df.loc[bad, "units"] * rng.integers(1, 4, size=int(bad.sum()))
df = df.sort_values("date", kind="mergesort").reset_index(drop=True)
df["date"] = df["date"].dt.strftime("%Y-%m-%d")
c = df[df["status"] == "completed"].copy()
c["rev"] = c["units"] * c["unit_price"]
c["year"] = c["date"].str[:4]
pv = c.pivot_table(index="region", columns="year", values="rev", aggfunc="sum").sort_index()
assert list(pv.columns) == ["2023", "2024"] and not pv.isna().any().any()
vals = [float(pv.loc[r, y]) for r in pv.index for y in ("2023", "2024")]
truth = {"chart": {"kind": "bar", "title": "Completed revenue by region and year",
                   "xlabel": "Region", "ylabel": "Revenue", "series": 2,
                   "labels": list(pv.index), "values": dsgen_viz.rounded(vals)}}
dsgen.write_outputs(args.out, {"/home/user/orders.csv": df[["order_id", "date", "region", "product", "units", "unit_price", "status"]]}, truth)
