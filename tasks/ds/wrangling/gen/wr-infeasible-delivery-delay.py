"""wr-infeasible-delivery-delay: an orders database that has no delivery data.

VM:    /home/user/orders.db, table orders(order_id, customer, order_date,
       amount, status) -- no carrier and no delivery timestamp anywhere, so the
       requested per-carrier delivery delay cannot be computed (infeasible).
Truth: {"infeasible": true, "columns": [...]} for the record.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
n = int(rng.integers(150, 300))
df = pd.DataFrame({
    "order_id": dsgen.make_ids("O", n, rng, width=6),
    "customer": dsgen.fake_names(rng, n, unique=False),
    "order_date": dsgen.fake_dates(rng, n, "2024-01-01", "2024-12-31").dt.strftime("%Y-%m-%d"),
    "amount": np.round(rng.gamma(2.0, 40.0, n), 2),
    "status": dsgen.choice(rng, ["placed", "shipped", "cancelled"], n, p=[0.2, 0.7, 0.1]),
})
schema = {"orders": "CREATE TABLE orders (order_id TEXT PRIMARY KEY, customer TEXT, order_date TEXT, amount REAL, status TEXT)"}
dsgen.write_outputs(args.out, {"/home/user/orders.db": dsgen.sqlite_bytes({"orders": df}, schema)},
                    {"infeasible": True, "columns": list(df.columns), "rows": n})
