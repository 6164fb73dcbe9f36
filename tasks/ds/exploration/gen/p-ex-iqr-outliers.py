"""p-ex-iqr-outliers: quartiles per store and Tukey (1.5 IQR) outliers within
each store.

VM:    /home/user/transactions.csv  txn_id, store, amount (EUR; ~2% blank).
       Stores have different spending levels, so a global fence flags the
       wrong rows; a few extreme amounts are planted in each store.
Truth: "quartiles": ds_table {store, q1, median, q3, n_outliers} (pandas'
       default linear quantiles of the non-missing amounts, rounded 2);
       "outliers": ds_table {txn_id, store, amount} of the amounts strictly
       outside [q1 - 1.5 IQR, q3 + 1.5 IQR] of their store.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
stores = dsgen.fake_cities(rng, 5)
parts = []
for s in stores:
    m = int(rng.integers(150, 320))
    mu = rng.uniform(2.5, 5.0)
    a = np.round(rng.lognormal(mu, 0.35, m), 2)
    k = int(rng.integers(2, 7))
    idx = rng.choice(m, size=k, replace=False)
    a[idx] = np.round(a[idx] * rng.choice([0.05, 4.0, 6.0], size=k), 2)
    parts.append(pd.DataFrame({"store": s, "amount": a}))
d = dsgen.shuffle(pd.concat(parts, ignore_index=True), rng)
d.insert(0, "txn_id", dsgen.make_ids("T", len(d), rng, width=6))
d, _ = dsgen.inject_missing(d, ["amount"], 0.02, rng)
q = d.groupby("store").amount.quantile([0.25, 0.5, 0.75]).unstack()
q.columns = ["q1", "median", "q3"]
iqr = q.q3 - q.q1
lo, hi = (q.q1 - 1.5 * iqr).reindex(d.store).to_numpy(), (q.q3 + 1.5 * iqr).reindex(d.store).to_numpy()
out = d[(d.amount < lo) | (d.amount > hi)]
q["n_outliers"] = out.groupby("store").size().reindex(q.index).fillna(0).astype(int)
q = q.reset_index()
dsgen.write_outputs(args.out, {"/home/user/transactions.csv": d},
                    {"quartiles": dsgen.table_truth(q, 2), "outliers": dsgen.table_truth(out[["txn_id", "store", "amount"]])})
