"""my-infeasible-age-bands: shop.db (customers: customer_id, name, country,
signup_date -- no birth date or age; orders) -- the data for the infeasible
request to report mean order value per customer age band.

truth: {"customers": n} for the record (the evaluator is infeasible).
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen

args = dsgen.parse_args(extra={"customers": 150, "orders": 800})
rng = dsgen.np_rng(args.seed)
nc, n = args.customers, args.orders
cust = pd.DataFrame({"customer_id": np.arange(1, nc + 1), "name": dsgen.fake_names(rng, nc),
                     "country": dsgen.choice(rng, ["Portugal", "Spain", "France", "Germany", "Italy"], nc),
                     "signup_date": dsgen.fake_dates(rng, nc, "2019-01-01", "2024-06-30").dt.strftime("%Y-%m-%d")})
orders = pd.DataFrame({"order_id": np.arange(1, n + 1), "customer_id": rng.integers(1, nc + 1, size=n),
                       "order_date": dsgen.fake_dates(rng, n, "2024-01-01", "2024-12-31").dt.strftime("%Y-%m-%d"),
                       "amount": np.round(rng.lognormal(4.0, 0.6, size=n), 2)})
schema = {"customers": "CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, signup_date TEXT)",
          "orders": "CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers, order_date TEXT, amount REAL)"}
dsgen.write_outputs(args.out, {"/home/user/shop.db": dsgen.sqlite_bytes({"customers": cust, "orders": orders}, schema)},
                    {"customers": nc})
