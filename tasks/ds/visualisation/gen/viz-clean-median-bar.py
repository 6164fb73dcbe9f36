"""viz-clean-median-bar: a messy order export (duplicate rows, region names in
inconsistent case with stray spaces, missing order values) -> bar chart of the
median order value per region, bars sorted by median, highest first.

truth: chart = {kind bar, title, xlabel, ylabel, labels, values}
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import dsgen, dsgen_viz

args = dsgen.parse_args(extra={"rows": 500})
rng = dsgen.np_rng(args.seed)
df = dsgen_viz.orders(rng, args.rows, k_regions=int(rng.integers(5, 8)))
# regions differ in typical basket value: scale prices per region
scale = {r: float(rng.uniform(0.6, 1.8)) for r in sorted(df["region"].unique())}
df["order_value"] = np.round(df["units"] * df["unit_price"] * df["region"].map(scale), 2)
df["date"] = df["date"].dt.strftime("%Y-%m-%d")
clean = df[["order_id", "date", "region", "product", "units", "order_value"]].copy()
clean, _ = dsgen.inject_missing(clean, ["order_value"], 0.04, rng)
med = clean.dropna(subset=["order_value"]).groupby("region")["order_value"].median()
med = med.sort_values(ascending=False, kind="mergesort")
messy = clean.copy()
variants = {r: [r.lower(), r.upper(), r.lower().capitalize() + " ", " " + r] for r in scale}
messy["region"], _ = dsgen.mislabel_categories(messy["region"], 0.25, rng, variants)
messy["region"], _ = dsgen.add_whitespace(messy["region"], 0.08, rng, kinds=("lead", "trail"))
messy, _ = dsgen.inject_duplicates(messy, int(len(messy) * 0.06), rng)
truth = {"chart": {"kind": "bar", "title": "Median order value by region",
                   "xlabel": "Region", "ylabel": "Median order value (EUR)",
                   "labels": list(med.index), "values": dsgen_viz.rounded(med.values)},
         "n_rows_clean": int(len(clean)), "n_rows_messy": int(len(messy))}
dsgen.write_outputs(args.out, {"/home/user/orders_export.csv": messy}, truth)
