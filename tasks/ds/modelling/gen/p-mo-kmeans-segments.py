"""p-mo-kmeans-segments: customer segments by k-means with k chosen by the
silhouette score, reported as a segment profile table.

VM:    /home/user/customers.csv  customer_id, annual_spend (EUR),
       visits_per_month, basket_items.  k true segments (k drawn in 3..6),
       centres drawn in a unit cube at least 0.5 apart (rejection
       sampling), within-segment sd 0.035 of each feature's range; spend's
       range (6000) dwarfs the others', so unscaled k-means is spend-driven.
Truth: "k"; "segments": ds_table {size, mean_annual_spend, mean_visits,
       mean_basket} per true segment (held-out group labels in
       host/groups.csv).  Clusters this separated are recovered exactly by
       KMeans on z-scores (checked for seeds 1..10 and their re-run seeds).
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
k = int(rng.integers(3, 7))
from sklearn.metrics import silhouette_score  # noqa: E402


def draw():
    while True:  # centres in a unit cube, pairwise at least 0.5 apart
        u = rng.random((k, 3))
        dist = np.sqrt(((u[:, None, :] - u[None, :, :]) ** 2).sum(-1))
        if dist[np.triu_indices(k, 1)].min() >= 0.5:
            break
    sizes = rng.choice(np.arange(60, 260, 7), size=k, replace=False)
    parts = []
    for g, (c, m) in enumerate(zip(u, sizes)):
        e = rng.normal(0, 0.035, (m, 3))
        parts.append(pd.DataFrame({
            "annual_spend": np.round(500 + 6000 * (c[0] + e[:, 0]), 2),
            "visits_per_month": np.round(1 + 9 * (c[1] + e[:, 1]), 2),
            "basket_items": np.round(5 + 45 * (c[2] + e[:, 2]), 1),
            "group": g}))
    return pd.concat(parts, ignore_index=True)


# keep a draw only when the true partition beats merging any of the 3 closest pairs
# by a clear silhouette margin, so that silhouette-driven k-means finds it
while True:
    d = draw()
    Z = d[["annual_spend", "visits_per_month", "basket_items"]].to_numpy()
    Z = (Z - Z.mean(0)) / Z.std(0)
    g = d.group.to_numpy()
    s_true = silhouette_score(Z, g)
    cz = np.array([Z[g == j].mean(0) for j in range(k)])
    pairs = sorted((np.linalg.norm(cz[a] - cz[b]), a, b) for a in range(k) for b in range(a + 1, k))[:3]
    s_merge = max(silhouette_score(Z, np.where(g == b, a, g)) for _, a, b in pairs)
    if s_true > s_merge + 0.08:
        break
d = dsgen.shuffle(d, rng)
d.insert(0, "customer_id", dsgen.make_ids("C", len(d), rng, width=6))
prof = d.groupby("group").agg(size=("customer_id", "size"), mean_annual_spend=("annual_spend", "mean"),
                              mean_visits=("visits_per_month", "mean"), mean_basket=("basket_items", "mean"))
prof = prof.sort_values("mean_annual_spend").round(2)
dsgen.write_outputs(args.out, {"/home/user/customers.csv": d.drop(columns=["group"])},
                    {"k": k, "segments": dsgen.table_truth(prof.reset_index(drop=True))},
                    {"groups.csv": d[["customer_id", "group"]]})
