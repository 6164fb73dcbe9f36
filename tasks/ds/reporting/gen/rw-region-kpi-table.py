"""rw-region-kpi-table: an order export -> a per-region KPI table (CSV).

VM:    /home/user/orders.csv  order_id,region,order_date,amount_eur,status
       status in completed/returned/cancelled; ~6% exact duplicate rows.
Truth: "kpis": region,orders,revenue_eur,avg_order_eur,return_rate_pct after
       dropping duplicates (orders = non-cancelled, revenue = completed only),
       sorted by revenue_eur descending.  "with_dups": the same keeping duplicates.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
regions = ["North", "South", "East", "West", "Central"][: int(rng.integers(4, 6))]
n = int(rng.integers(300, 450))
reg = dsgen.choice(rng, regions, n, p=None)
scale = {r: rng.uniform(40, 140) for r in regions}
pret = {r: rng.uniform(0.03, 0.2) for r in regions}
status = []
for r in reg:
    u = rng.random()
    status.append("cancelled" if u < 0.08 else "returned" if u < 0.08 + pret[r] else "completed")
df = pd.DataFrame({
    "order_id": dsgen.make_ids("SO", n, rng, width=6),
    "region": reg,
    "order_date": dsgen.fake_dates(rng, n, "2024-01-01", "2024-12-31").dt.strftime("%Y-%m-%d"),
    "amount_eur": [round(float(rng.gamma(2.0, scale[r] / 2)) + 5, 2) for r in reg],
    "status": status,
})
out, _ = dsgen.inject_duplicates(df, max(12, int(0.06 * n)), rng)


def kpis(d):
    rows = []
    for r, g in d.groupby("region"):
        comp = g[g.status == "completed"]
        ret = g[g.status == "returned"]
        nc = len(g[g.status != "cancelled"])
        rev = comp.amount_eur.sum()
        rows.append([r, nc, round(rev, 2), round(rev / len(comp), 2),
                     round(100 * len(ret) / (len(comp) + len(ret)), 1)])
    t = pd.DataFrame(rows, columns=["region", "orders", "revenue_eur", "avg_order_eur", "return_rate_pct"])
    return t.sort_values("revenue_eur", ascending=False).reset_index(drop=True)


good = kpis(out.drop_duplicates())
dups = kpis(out)
dsgen.write_outputs(args.out, {"/home/user/orders.csv": dsgen.df_to_csv_bytes(out)},
                    {"kpis": dsgen.table_truth(good), "with_dups": dsgen.table_truth(dups), "rows": len(out)})
