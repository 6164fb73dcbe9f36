"""multi-sqlite-xlsx-chart: shop.db (customers, orders over 2023-2024 with a
status) -> completed 2024 revenue per country: an .xlsx sheet and a bar chart.

truth: revenue = {columns: country, orders, revenue; rows} sorted by revenue
descending; chart = {kind bar, title, xlabel, ylabel, labels, values}.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen

COUNTRIES = ["Portugal", "Spain", "France", "Germany", "Austria", "Czechia",
             "Poland", "Norway", "Ireland", "Italy", "Netherlands", "Belgium"]
args = dsgen.parse_args(extra={"customers": 80, "orders": 700})
rng = dsgen.np_rng(args.seed)
k = int(rng.integers(5, 8))
countries = [COUNTRIES[i] for i in rng.choice(len(COUNTRIES), size=k, replace=False)]
w = rng.dirichlet(np.ones(k) * 1.5)
cust = pd.DataFrame({"customer_id": np.arange(1, args.customers + 1),
                     "name": dsgen.fake_names(rng, args.customers),
                     "country": dsgen.choice(rng, countries, args.customers, p=w)})
n = args.orders
spend = rng.lognormal(4.0, 0.6, size=args.customers)
ci = rng.integers(0, args.customers, size=n)
orders = pd.DataFrame({
    "order_id": np.arange(1001, 1001 + n),
    "customer_id": cust["customer_id"].to_numpy()[ci],
    "order_date": dsgen.fake_dates(rng, n, "2023-01-01", "2024-12-31").dt.strftime("%Y-%m-%d"),
    "amount": np.round(spend[ci] * rng.uniform(0.5, 1.5, size=n), 2),
    "status": dsgen.choice(rng, ["completed", "cancelled", "pending"], n, p=[0.78, 0.14, 0.08]),
})
m = orders.merge(cust, on="customer_id")
m = m[(m["status"] == "completed") & (m["order_date"].str[:4] == "2024")]
t = m.groupby("country").agg(orders=("order_id", "count"), revenue=("amount", "sum")).reset_index()
t["revenue"] = t["revenue"].round(2)
t = t.sort_values("revenue", ascending=False, kind="mergesort").reset_index(drop=True)
truth = {"revenue": dsgen.table_truth(t),
         "chart": {"kind": "bar", "title": "Completed revenue by country, 2024",
                   "xlabel": "Country", "ylabel": "Revenue", "labels": list(t["country"]),
                   "values": [float(v) for v in t["revenue"]]}}
schema = {"customers": "CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name TEXT, country TEXT)",
          "orders": "CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers, order_date TEXT, amount REAL, status TEXT)"}
db = dsgen.sqlite_bytes({"customers": cust, "orders": dsgen.shuffle(orders, rng)}, schema)
dsgen.write_outputs(args.out, {"/home/user/shop.db": db}, truth)
