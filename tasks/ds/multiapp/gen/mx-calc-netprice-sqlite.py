"""mx-calc-netprice-sqlite: price_list.xlsx (sheet Prices: sku, product,
category, list_price, discount_pct with blanks = no discount, empty net_price)
open in Calc, and orders.db (order_lines: line_id, order_date, sku with stray
case/spaces, qty, status) -> fill net_price in Calc and save; then with sqlite3
+ python the Q3-2024 shipped revenue per category at net prices.

truth: prices = {sku, net_price}; revenue = {category, units, revenue} sorted by revenue desc.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_gui

TASK = "mx-calc-netprice-sqlite"
CATS = {"Garden": ["Hose", "Rake", "Planter", "Shears", "Sprinkler", "Trowel", "Seed tray"],
        "Kitchen": ["Kettle", "Pan", "Knife set", "Grater", "Blender", "Colander", "Whisk"],
        "Office": ["Stapler", "Desk lamp", "Notebook", "Monitor arm", "Pen set", "Organizer", "Chair mat"],
        "Outdoor": ["Tent", "Lantern", "Cool box", "Camp stool", "Sleeping bag", "Stove", "Hammock"],
        "Bath": ["Towel", "Bath mat", "Shower head", "Mirror", "Soap rack", "Robe", "Scale"],
        "Toys": ["Puzzle", "Kite", "Board game", "Yo-yo", "Blocks", "Plush bear", "Racing car"]}
args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
cats = [list(CATS)[i] for i in sorted(rng.choice(len(CATS), size=5, replace=False))]
N = 36
items = [(c, p) for c in cats for p in CATS[c]]
pick = rng.choice(len(items), size=N, replace=True)
skus = [f"SKU-{x}" for x in rng.choice(np.arange(1000, 9999), size=N, replace=False)]
cat = [items[i][0] for i in pick]
prod = [items[i][1] + " " + str(int(rng.integers(1, 9))) for i in pick]
lp = np.round(rng.uniform(4, 240, size=N), 2)
disc = rng.choice([5, 10, 15, 20, 25, 30, 35], size=N).astype(float)
disc[rng.random(N) < 0.3] = np.nan
net = np.round(lp * (1 - np.nan_to_num(disc) / 100) + 1e-9, 2)
prices = pd.DataFrame({"sku": skus, "product": prod, "category": cat, "list_price": lp,
                       "discount_pct": disc, "net_price": [None] * N})
# order lines
M = 900
li_sku = np.array(skus)[rng.integers(0, N, size=M)]
dates = pd.to_datetime("2024-01-01") + pd.to_timedelta(rng.integers(0, 366, size=M), unit="D")
qty = rng.integers(1, 8, size=M)
status = dsgen.choice(rng, ["shipped", "cancelled", "returned"], M, p=[0.78, 0.14, 0.08])
shown = []
for s in li_sku:
    r = rng.random()
    shown.append(s.lower() if r < 0.12 else (s + " " if r < 0.22 else (" " + s if r < 0.27 else s)))
lines = pd.DataFrame({"line_id": np.arange(1, M + 1), "order_date": dates.strftime("%Y-%m-%d"),
                      "sku": shown, "qty": qty, "status": status})
netmap = dict(zip(skus, net))
catmap = dict(zip(skus, cat))
q3 = (lines.status == "shipped") & (lines.order_date >= "2024-07-01") & (lines.order_date <= "2024-09-30")
d = pd.DataFrame({"sku": li_sku[q3.values], "qty": qty[q3.values]})
d["category"] = d.sku.map(catmap)
d["rev"] = d.qty * d.sku.map(netmap)
r = d.groupby("category").agg(units=("qty", "sum"), revenue=("rev", "sum")).reset_index()
r["revenue"] = r.revenue.round(2)
r = r.sort_values("revenue", ascending=False)
truth = {"prices": {"columns": ["sku", "net_price"], "rows": [[s, float(v)] for s, v in zip(skus, net)]},
         "revenue": dsgen.table_truth(r[["category", "units", "revenue"]])}
dsgen.write_outputs(args.out, {"/home/user/price_list.xlsx": dsgen_gui.xlsx_bytes({"Prices": prices}),
                               "/home/user/orders.db": {"order_lines": lines},
                               **dsgen_gui.calc_vm_files(TASK)}, truth)
