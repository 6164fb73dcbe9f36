"""j-nb-region-report: sales lines (region, product, units, unit_price); in
the Jupyter notebook: a per-region report table (orders, units, revenue,
share of revenue) sorted by revenue, and the printed grand total.

truth: table {region, orders, units, revenue, share_pct};
notebook contains "Total revenue: <total>"
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_jupyter

args = dsgen.parse_args(extra={"rows": 360})
rng = dsgen.np_rng(args.seed, 41)
n = args.rows
regions = dsgen.fake_cities(rng, int(rng.integers(4, 7)))
products = {"Widget": 4.5, "Gadget": 12.0, "Gizmo": 27.5, "Doohickey": 8.25, "Sprocket": 2.2}
pw = rng.dirichlet(np.ones(len(regions)) * 2)
reg = dsgen.choice(rng, regions, n, p=list(pw))
prod = dsgen.choice(rng, list(products), n)
units = rng.integers(1, 40, n)
price = np.round([products[p] * rng.uniform(0.85, 1.15) for p in prod], 2)
d = pd.DataFrame({"line_id": dsgen.make_ids("L", n, rng), "region": reg, "product": prod,
                  "units": units, "unit_price": price})
rev = d.units * d.unit_price
g = pd.DataFrame({"orders": d.groupby("region").size(), "units": d.groupby("region").units.sum(),
                  "revenue": rev.groupby(d.region).sum()})
total = float(rev.sum())
g["share_pct"] = (g.revenue / total * 100).round(1)
g["revenue"] = g.revenue.round(2)
g = g.sort_values("revenue", ascending=False).reset_index()
q = ("# Sales report by region\n\n"
     "`/home/user/sales.csv` holds this quarter's sales lines (line_id, region, product, units, unit_price; "
     "a line's revenue is units × unit_price).\n\n"
     "**Report:** write `/home/user/region_report.csv` with the columns `region,orders,units,revenue,share_pct`: per "
     "region the number of sales lines, the units sold, the revenue (rounded to 2 decimals) and the region's share of "
     "the total revenue in percent (rounded to 1 decimal), sorted by revenue from highest to lowest. Display the table "
     "in the notebook and print the grand total as `Total revenue: <total with 2 decimals>`.")
files = {"/home/user/sales.csv": d, **dsgen_jupyter.vm_files(q)}
dsgen.write_outputs(args.out, files, {"table": dsgen.table_truth(g), "total": round(total, 2),
                                      "notebook": {"contains": [f"Total revenue: {total:.2f}"]}})
