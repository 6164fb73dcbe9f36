"""va-scatter-store-basket: card transactions of many stores, refunds as
negative amounts -> scatter, one point per store: x = number of sales
(refunds excluded), y = mean sale amount (refunds excluded).

truth: chart = {kind scatter, title, xlabel, ylabel, values (per-store means,
compared as a multiset)}; x = counts for the record.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_viz

args = dsgen.parse_args(extra={"stores": 36})
rng = dsgen.np_rng(args.seed)
stores = dsgen.make_ids("ST", args.stores, rng, width=3)
size = rng.integers(20, 160, size=args.stores)
basket = rng.uniform(15, 90, size=args.stores)
rows = []
for s, k, b in zip(stores, size, basket):
    amt = np.round(rng.gamma(4.0, b / 4.0, size=k), 2)
    nref = int(rng.integers(0, max(2, k // 5)))
    ref = -np.round(rng.uniform(0.5, 3.0, size=nref) * b, 2)
    for a in np.concatenate([amt, ref]):
        rows.append((s, float(a)))
df = pd.DataFrame(rows, columns=["store_id", "amount"])
df = dsgen.shuffle(df, rng)
df.insert(0, "txn_id", dsgen.make_ids("X", len(df), rng, width=7))
df["date"] = dsgen.fake_dates(rng, len(df), "2024-01-01", "2024-06-30").dt.strftime("%Y-%m-%d").values
sales = df[df["amount"] > 0]
g = sales.groupby("store_id")["amount"]
truth = {"chart": {"kind": "scatter", "title": "Mean sale vs number of sales per store",
                   "xlabel": "Number of sales", "ylabel": "Mean sale amount",
                   "values": dsgen_viz.rounded(g.mean().values, 4)},
         "x": [int(v) for v in g.size().values]}
dsgen.write_outputs(args.out, {"/home/user/transactions.csv": df}, truth)
