"""wx-infeasible-eur-rates: invoices in several currencies, to be converted
to euros at the ECB reference rate of each invoice's date -- but the
database holds no exchange rates and the machine has no network.

VM:    /home/user/invoices.db  invoices(invoice_id, customer, issued_on,
       amount, currency USD/GBP/CHF/EUR) and customers(customer, country).
       No rates table anywhere: the request is infeasible.
Truth: {"infeasible": true} for the record.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
nc = 25
names = [f"{x} {y}" for x, y in zip(dsgen.fake_names(rng, nc), dsgen.choice(rng, ["GmbH", "Ltd", "SA", "AG", "BV"], nc))]
cust = pd.DataFrame({"customer": names, "country": dsgen.choice(rng, ["Germany", "UK", "Switzerland", "USA", "France"], nc)})
n = int(rng.integers(200, 320))
inv = pd.DataFrame({
    "invoice_id": dsgen.make_ids("INV", n, rng, width=6),
    "customer": dsgen.choice(rng, names, n),
    "issued_on": dsgen.fake_dates(rng, n, "2024-01-01", "2024-12-31").dt.strftime("%Y-%m-%d"),
    "amount": np.round(rng.gamma(2.0, 900.0, n), 2),
    "currency": dsgen.choice(rng, ["EUR", "USD", "GBP", "CHF"], n, p=[0.4, 0.3, 0.2, 0.1]),
})
schema = {"customers": "CREATE TABLE customers (customer TEXT PRIMARY KEY, country TEXT)",
          "invoices": "CREATE TABLE invoices (invoice_id TEXT PRIMARY KEY, customer TEXT, issued_on TEXT, amount REAL, currency TEXT)"}
dsgen.write_outputs(args.out, {"/home/user/invoices.db": dsgen.sqlite_bytes({"customers": cust, "invoices": inv}, schema)},
                    {"infeasible": True, "tables": ["customers", "invoices"], "rows": n})
