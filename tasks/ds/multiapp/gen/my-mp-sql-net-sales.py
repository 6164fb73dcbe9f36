"""my-mp-sql-net-sales: shop.db (customers with a segment, orders over
2023-2024 with a status in mixed letter case, refunds: 0-3 partial refunds
per order) -> a SQL file written in Mousepad, run with the sqlite3 CLI:
net sales per customer segment for completed 2024 orders.

The trap: joining refunds straight onto orders repeats an order once per
refund (inflated order counts and gross).

truth: report = {columns: segment, orders, gross, refunds, net; rows}
sorted by net descending.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen

SEGMENTS = ["Retail", "Wholesale", "Online", "Corporate", "Education", "Public sector", "Hospitality"]
args = dsgen.parse_args(extra={"customers": 120, "orders": 900})
rng = dsgen.np_rng(args.seed)
k = int(rng.integers(4, 7))
segs = [SEGMENTS[i] for i in sorted(rng.choice(len(SEGMENTS), size=k, replace=False))]
nc = args.customers
cust = pd.DataFrame({"customer_id": np.arange(1, nc + 1), "name": dsgen.fake_names(rng, nc),
                     "segment": dsgen.choice(rng, segs, nc, p=list(rng.dirichlet([3] * k)))})
n = args.orders
scale = rng.lognormal(4.2, 0.5, size=nc)
ci = rng.integers(0, nc, size=n)
status = np.array(dsgen.choice(rng, ["completed", "cancelled", "pending"], n, p=[0.75, 0.17, 0.08]), dtype=object)
for i in rng.choice(n, size=n // 4, replace=False):
    status[i] = status[i].upper() if rng.random() < 0.5 else status[i].capitalize()
orders = pd.DataFrame({"order_id": np.arange(5001, 5001 + n), "customer_id": ci + 1,
                       "order_date": dsgen.fake_dates(rng, n, "2023-01-01", "2024-12-31").dt.strftime("%Y-%m-%d"),
                       "amount": np.round(scale[ci] * rng.uniform(0.4, 1.6, size=n), 2), "status": status})
nref = rng.choice(4, size=n, p=[0.62, 0.2, 0.12, 0.06])
ref_rows = []
for oid, amt, m in zip(orders.order_id, orders.amount, nref):
    for _ in range(int(m)):
        ref_rows.append((int(oid), round(float(amt) * float(rng.uniform(0.05, 0.3)), 2)))
refunds = pd.DataFrame(ref_rows, columns=["order_id", "refund_amount"])
refunds.insert(0, "refund_id", np.arange(1, len(refunds) + 1))
sel = orders[(orders.status.str.lower() == "completed") & (orders.order_date.str[:4] == "2024")]
rs = refunds.groupby("order_id").refund_amount.sum()
sel = sel.assign(ref=sel.order_id.map(rs).fillna(0.0)).merge(cust, on="customer_id")
t = sel.groupby("segment").agg(orders=("order_id", "size"), gross=("amount", "sum"), refunds=("ref", "sum")).reset_index()
t["net"] = t.gross - t.refunds
for c in ["gross", "refunds", "net"]:
    t[c] = t[c].round(2)
t = t.sort_values("net", ascending=False, kind="mergesort").reset_index(drop=True)
schema = {"customers": "CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name TEXT, segment TEXT)",
          "orders": "CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers, order_date TEXT, amount REAL, status TEXT)",
          "refunds": "CREATE TABLE refunds (refund_id INTEGER PRIMARY KEY, order_id INTEGER REFERENCES orders, refund_amount REAL)"}
db = dsgen.sqlite_bytes({"customers": cust, "orders": dsgen.shuffle(orders, rng), "refunds": dsgen.shuffle(refunds, rng)}, schema)
stub = "-- Net sales per customer segment, completed orders of 2024.\n-- Run with: sqlite3 -header -csv /home/user/shop.db < /home/user/net_sales.sql > /home/user/net_sales.csv\n"
dsgen.write_outputs(args.out, {"/home/user/shop.db": db, "/home/user/net_sales.sql": stub}, {"report": dsgen.table_truth(t)})
