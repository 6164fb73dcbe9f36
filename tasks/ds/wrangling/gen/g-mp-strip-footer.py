"""g-mp-strip-footer: pos_export.csv, a point-of-sale export with metadata
comment lines before the header and a TOTAL row plus a trailer comment after
the data -> remove them in Mousepad so the file is a plain CSV.

truth: table = {columns: receipt, date, store, product, qty, amount; rows}
(the data rows only); n_rows.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen

PRODUCTS = ["espresso", "latte", "croissant", "bagel", "tea", "muffin", "juice", "sandwich"]
args = dsgen.parse_args(extra={"rows": 45})
rng = dsgen.np_rng(args.seed)
n = args.rows + int(rng.integers(0, 15))
stores = dsgen.fake_cities(rng, 3)
df = pd.DataFrame({"receipt": dsgen.make_ids("R", n, rng, width=6),
                   "date": dsgen.fake_dates(rng, n, "2024-03-01", "2024-03-31").dt.strftime("%Y-%m-%d"),
                   "store": dsgen.choice(rng, stores, n),
                   "product": dsgen.choice(rng, PRODUCTS, n),
                   "qty": rng.integers(1, 6, size=n)})
df["amount"] = np.round(df.qty * rng.uniform(1.8, 7.5, size=n), 2)
head = (f"# POS export v{int(rng.integers(2, 9))}.{int(rng.integers(0, 10))}\n"
        f"# terminal T-{int(rng.integers(100, 999))}, period 2024-03\n"
        f"# rows: {n}\n")
tail = f"TOTAL,,,,{int(df.qty.sum())},{df.amount.sum():.2f}\n# end of export ({n} receipts)\n"
text = head + dsgen.df_to_csv_bytes(df).decode() + tail
truth = {"table": dsgen.table_truth(df), "n_rows": n}
dsgen.write_outputs(args.out, {"/home/user/pos_export.csv": text}, truth)
