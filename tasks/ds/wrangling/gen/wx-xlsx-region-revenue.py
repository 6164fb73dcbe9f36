"""wx-xlsx-region-revenue: a sales workbook with text amounts, mixed dates,
messy store codes and duplicate rows, joined to a store sheet and summarised
by region and month.

VM:    /home/user/sales.xlsx  sheet "Orders" (order_id, order_date, store,
       amount) and sheet "Stores" (store, region).  Defects: order_date is a
       real date cell for some rows and text ("DD.MM.YYYY" or "DD Mon YYYY")
       for others; amount is text with thousands separators ("1,234.50"),
       missing as "N/A", "-" or an empty cell; store codes with stray case and
       spaces ("s03 ", " S03"); ~4% exact duplicate rows.
Truth: "summary": ds_table {region, month (YYYY-MM), orders, revenue (2 dp)}
       over distinct orders with an amount.
"""
import datetime as dt
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen, dsgen_gui  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args(extra={"rows": 420})
rng = dsgen.np_rng(args.seed)
n = args.rows
nst = 9
stores = [f"S{k:02d}" for k in range(1, nst + 1)]
regions = ["North", "South", "East", "West"]
reg = regions + dsgen.choice(rng, regions, nst - 4)
reg = [reg[k] for k in rng.permutation(nst)]
stores_df = pd.DataFrame({"store": stores, "region": reg})
dates = dsgen.fake_dates(rng, n, "2024-01-01", "2024-06-30")
store = dsgen.choice(rng, stores, n)
amt = np.round(rng.gamma(1.6, 700.0, n) + 5, 2)
ids = dsgen.make_ids("ORD", n, rng, width=6)
date_cells, amt_cells, store_cells, ok = [], [], [], []
for i in range(n):
    r = rng.random()
    ts = dates.iloc[i]
    if r < 0.5:
        date_cells.append(dt.datetime(ts.year, ts.month, ts.day))
    elif r < 0.8:
        date_cells.append(ts.strftime("%d.%m.%Y"))
    else:
        date_cells.append(ts.strftime("%d %b %Y"))
    r = rng.random()
    if r < 0.07:
        amt_cells.append(["N/A", "-", None][int(rng.integers(3))])
        ok.append(False)
    else:
        amt_cells.append(f"{amt[i]:,.2f}")
        ok.append(True)
    s = store[i]
    r = rng.random()
    if r < 0.12:
        s = s.lower()
    if rng.random() < 0.15:
        s = [" " + s, s + " ", " " + s + "  "][int(rng.integers(3))]
    store_cells.append(s)
orders = pd.DataFrame({"order_id": ids, "order_date": pd.Series(date_cells, dtype=object),
                       "store": store_cells, "amount": pd.Series(amt_cells, dtype=object)})
shown, _ = dsgen.inject_duplicates(orders, max(6, int(0.04 * n)), rng)

ref = pd.DataFrame({"store": store, "month": dates.dt.strftime("%Y-%m"), "amt": amt, "ok": ok})
ref = ref[ref.ok].merge(stores_df, on="store")
g = ref.groupby(["region", "month"]).agg(orders=("amt", "size"), revenue=("amt", "sum")).reset_index()
g["revenue"] = g["revenue"].round(2)
xlsx = dsgen_gui.xlsx_bytes({"Orders": shown, "Stores": stores_df})
dsgen.write_outputs(args.out, {"/home/user/sales.xlsx": xlsx},
                    {"summary": dsgen.table_truth(g), "rows": len(shown)})
