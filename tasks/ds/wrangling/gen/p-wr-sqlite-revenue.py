"""p-wr-sqlite-revenue: a four-table SQLite join aggregated by country and
product category.

VM:    /home/user/shop.db  customers(customer_id, name, country),
       orders(order_id, customer_id, order_date YYYY-MM-DD, status:
       shipped/cancelled/returned), order_items(order_id, product_id, qty),
       products(product_id, name, category, unit_price).  Orders span
       2023-2025.
Truth: "revenue": ds_table {country, category, orders, revenue}: shipped
       orders placed in 2024, orders = distinct orders, revenue =
       sum(qty * unit_price) rounded 2.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
countries = ["Portugal", "Spain", "France", "Germany", "Austria"]
cust = pd.DataFrame({"customer_id": np.arange(1, 81), "name": dsgen.fake_names(rng, 80),
                     "country": dsgen.choice(rng, countries, 80)})
cats = ["garden", "kitchen", "toys", "books"]
prod = pd.DataFrame({"product_id": np.arange(101, 131), "name": [f"item {i}" for i in range(30)],
                     "category": dsgen.choice(rng, cats, 30), "unit_price": np.round(rng.uniform(3, 120, 30), 2)})
no = 600
orders = pd.DataFrame({"order_id": np.arange(5001, 5001 + no), "customer_id": rng.integers(1, 81, no),
                       "order_date": dsgen.fake_dates(rng, no, "2023-06-01", "2025-03-31").dt.strftime("%Y-%m-%d"),
                       "status": dsgen.choice(rng, ["shipped", "cancelled", "returned"], no, p=[0.75, 0.15, 0.1])})
items = []
for oid in orders.order_id:
    for pid in rng.choice(prod.product_id, size=int(rng.integers(1, 4)), replace=False):
        items.append((int(oid), int(pid), int(rng.integers(1, 5))))
items = pd.DataFrame(items, columns=["order_id", "product_id", "qty"])
j = items.merge(orders, on="order_id").merge(cust, on="customer_id").merge(prod, on="product_id")
j = j[(j.status == "shipped") & (j.order_date.str[:4] == "2024")]
j["rev"] = j.qty * j.unit_price
r = j.groupby(["country", "category"]).agg(orders=("order_id", "nunique"), revenue=("rev", "sum")).round(2).reset_index()
schema = {"customers": "CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name TEXT, country TEXT)",
          "products": "CREATE TABLE products (product_id INTEGER PRIMARY KEY, name TEXT, category TEXT, unit_price REAL)",
          "orders": "CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER, order_date TEXT, status TEXT)",
          "order_items": "CREATE TABLE order_items (order_id INTEGER, product_id INTEGER, qty INTEGER)"}
db = dsgen.sqlite_bytes({"customers": cust, "products": prod, "orders": orders, "order_items": items}, schema)
dsgen.write_outputs(args.out, {"/home/user/shop.db": db}, {"revenue": dsgen.table_truth(r)})
