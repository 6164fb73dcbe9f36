"""wx-infeasible-customer-age: customers (JSON) and orders (CSV); the request
asks for each customer's age at their first order from their date of birth,
but the customer export has no birth date (only a sign-up date).

VM:    /home/user/customers.json  [{customer_id, name, email, country,
       signup_date}], /home/user/orders.csv  order_id, customer_id,
       order_date, total.  No birth date or age anywhere: infeasible.
Truth: {"infeasible": true} for the record.
"""
import json
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
nc = int(rng.integers(60, 120))
ids = dsgen.make_ids("CU", nc, rng, width=5)
names = dsgen.fake_names(rng, nc)
signup = dsgen.fake_dates(rng, nc, "2021-01-01", "2023-12-31").dt.strftime("%Y-%m-%d")
countries = dsgen.choice(rng, ["Portugal", "Spain", "France", "Germany", "Italy"], nc)
cust = [{"customer_id": i, "name": nm, "email": nm.lower().replace(" ", ".") + "@example.com",
         "country": c, "signup_date": s} for i, nm, c, s in zip(ids, names, countries, signup)]
no = int(rng.integers(300, 500))
orders = pd.DataFrame({"order_id": dsgen.make_ids("O", no, rng, width=6),
                       "customer_id": dsgen.choice(rng, ids, no),
                       "order_date": dsgen.fake_dates(rng, no, "2024-01-01", "2024-12-31").dt.strftime("%Y-%m-%d"),
                       "total": np.round(rng.gamma(2.0, 45.0, no), 2)})
dsgen.write_outputs(args.out, {"/home/user/customers.json": json.dumps(cust, indent=1) + "\n",
                               "/home/user/orders.csv": orders},
                    {"infeasible": True, "customer_fields": list(cust[0]), "customers": nc})
