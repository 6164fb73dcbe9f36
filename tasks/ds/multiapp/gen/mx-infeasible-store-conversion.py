"""mx-infeasible-store-conversion: footfall.html (store, visits for March
2024) shown in Chromium and pos.db, table transactions(txn_id, txn_date,
amount, payment_method) -- the transactions carry no store, till or location
at all, so a per-store conversion rate cannot be computed (infeasible).

truth: {"infeasible": true, ...} for the record.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_gui

STORES = ["Lisbon Baixa", "Porto Ribeira", "Madrid Sol", "Lyon Part-Dieu", "Berlin Mitte", "Vienna Ring", "Prague Old Town", "Milan Duomo"]
args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
k = int(rng.integers(5, 8))
stores = [STORES[i] for i in sorted(rng.choice(len(STORES), size=k, replace=False))]
visits = rng.integers(3000, 25000, size=k)
n = int(rng.integers(4000, 9000))
tx = pd.DataFrame({"txn_id": np.arange(1, n + 1),
                   "txn_date": (pd.to_datetime("2024-03-01") + pd.to_timedelta(rng.integers(0, 31, size=n), unit="D")).strftime("%Y-%m-%d"),
                   "amount": np.round(rng.lognormal(3.4, 0.7, size=n), 2),
                   "payment_method": dsgen.choice(rng, ["card", "cash", "mobile"], n, p=[0.6, 0.25, 0.15])})
body = ("<h1>Store footfall report</h1>\n<p class=\"note\">Period: March 2024. Visits counted by the door sensors.</p>\n"
        + dsgen_gui.html_table(["Store", "Visits"], [[s, f"{v:,}"] for s, v in zip(stores, visits)])
        + "\n<p class=\"note\">End of report.</p>")
schema = {"transactions": "CREATE TABLE transactions (txn_id INTEGER PRIMARY KEY, txn_date TEXT, amount REAL, payment_method TEXT)"}
dsgen.write_outputs(args.out, {"/home/user/footfall.html": dsgen_gui.html_page("Store footfall report", body),
                               "/home/user/pos.db": dsgen.sqlite_bytes({"transactions": tx}, schema)},
                    {"infeasible": True, "columns": list(tx.columns), "stores": stores})
