"""wx-sqlite-stock-kg: stock receipts in a SQLite database, with duplicate
rows, quantities stored as text in kg or g, missing-value markers and
inconsistent category labels.

VM:    /home/user/warehouse.db  products(sku, name, category) with category
       labels in stray case/spaces ("Dairy", " dairy", "DAIRY ");
       receipts(receipt_id, sku, received_on YYYY-MM-DD, qty TEXT, unit TEXT)
       with unit kg or g (stray case/spaces), qty missing as '', 'N/A', '-'
       or NULL, and ~5% of the rows loaded twice (identical).
Truth: "summary": ds_table {category (lower case, trimmed), receipts,
       total_kg (3 dp)} over the distinct receipts of 2024 with a quantity.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args(extra={"rows": 520})
rng = dsgen.np_rng(args.seed)
cats = ["dairy", "bakery", "produce", "frozen", "beverages"]
nprod = 36
skus = [f"SKU-{k}" for k in sorted(rng.choice(9000, size=nprod, replace=False) + 1000)]
pcat = dsgen.choice(rng, cats, nprod)
def variant(c):
    r = rng.random()
    if r < 0.55:
        return c
    v = [c.title(), c.upper(), c.title()][int(rng.integers(3))]
    if rng.random() < 0.5:
        v = [" " + v, v + " ", " " + v + " "][int(rng.integers(3))]
    return v
products = pd.DataFrame({"sku": skus, "name": [f"{c} item {i + 1}" for i, c in enumerate(pcat)],
                         "category": [variant(c) for c in pcat]})
n = args.rows
sku = dsgen.choice(rng, skus, n)
dates = dsgen.fake_dates(rng, n, "2023-10-01", "2025-03-31").dt.strftime("%Y-%m-%d")
kg = np.round(rng.gamma(2.0, 14.0, n) + 0.5, 1)
qty, unit, ok = [], [], []
for i in range(n):
    g = rng.random() < 0.35
    u = "g" if g else "kg"
    if rng.random() < 0.2:
        u = [u.upper(), u + " ", " " + u.upper()][int(rng.integers(3))]
    unit.append(u)
    if rng.random() < 0.07:
        qty.append(["", "N/A", "-", None][int(rng.integers(4))])
        ok.append(False)
    else:
        qty.append(f"{int(round(kg[i] * 1000))}" if g else f"{kg[i]:.1f}")
        ok.append(True)
rec = pd.DataFrame({"receipt_id": np.arange(1, n + 1) * 7 + int(rng.integers(100, 900)), "sku": sku,
                    "received_on": dates, "qty": qty, "unit": unit})
shown, _ = dsgen.inject_duplicates(rec, max(8, int(0.05 * n)), rng)

ref = rec[np.array(ok)].copy()
ref = ref[ref.received_on.str[:4] == "2024"]
ref["kg"] = np.where(ref.unit.str.strip().str.lower() == "g", ref.qty.astype(float) / 1000, ref.qty.astype(float))
ref = ref.merge(pd.DataFrame({"sku": skus, "cat": pcat}), on="sku")
g = ref.groupby("cat").agg(receipts=("kg", "size"), total_kg=("kg", "sum")).reset_index()
g.columns = ["category", "receipts", "total_kg"]
g["total_kg"] = g["total_kg"].round(3)
schema = {"products": "CREATE TABLE products (sku TEXT, name TEXT, category TEXT)",
          "receipts": "CREATE TABLE receipts (receipt_id INTEGER, sku TEXT, received_on TEXT, qty TEXT, unit TEXT)"}
db = dsgen.sqlite_bytes({"products": products, "receipts": shown}, schema)
dsgen.write_outputs(args.out, {"/home/user/warehouse.db": db},
                    {"summary": dsgen.table_truth(g), "rows": len(shown)})
