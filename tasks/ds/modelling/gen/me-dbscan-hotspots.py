"""me-dbscan-hotspots: density clustering of incident locations (DBSCAN on
raw metre coordinates), reported as a hotspot table and a noise count.

VM:    /home/user/incidents.csv  incident_id, x_m, y_m (metres on a city
       grid, 0-5000 east, 0-3000 north: unequal ranges, so standardising
       changes the result), reported_at (irrelevant).
       Synthesised: 4-7 seeded Gaussian hotspots (sd 40-110 m, 25-90
       points each) plus uniform background incidents.
Truth: "hotspots": ds_table hotspot,size,center_x,center_y from
       DBSCAN(eps=120, min_samples=10) on (x_m, y_m), hotspots numbered 1..
       by size descending (ties: smaller center_x first), centers = mean
       coordinates rounded to 1 decimal; "noise": the count of label -1.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.cluster import DBSCAN  # noqa: E402


def hotspots(d):
    lab = DBSCAN(eps=120, min_samples=10).fit_predict(d[["x_m", "y_m"]])
    g = d.assign(c=lab)[lab >= 0].groupby("c").agg(size=("x_m", "size"), center_x=("x_m", "mean"), center_y=("y_m", "mean"))
    g = g.round({"center_x": 1, "center_y": 1}).sort_values(["size", "center_x"], ascending=[False, True]).reset_index(drop=True)
    g.insert(0, "hotspot", range(1, len(g) + 1))
    return g, int((lab == -1).sum())


args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
for _ in range(50):
    k = int(rng.integers(4, 8))
    cx, cy = rng.uniform(300, 4700, k), rng.uniform(300, 2700, k)
    if min(np.hypot(cx[i] - cx[j], cy[i] - cy[j]) for i in range(k) for j in range(i)) > 600:
        break
pts = []
for i in range(k):
    m, sd = int(rng.integers(25, 91)), rng.uniform(40, 110)
    pts.append(np.c_[rng.normal(cx[i], sd, m), rng.normal(cy[i], sd, m)])
nb = int(rng.integers(150, 260))
pts.append(np.c_[rng.uniform(0, 5000, nb), rng.uniform(0, 3000, nb)])
P = np.round(np.clip(np.vstack(pts), 0, [5000, 3000]), 1)
P = P[rng.permutation(len(P))]
d = pd.DataFrame({"incident_id": dsgen.make_ids("INC", len(P), rng, width=6), "x_m": P[:, 0], "y_m": P[:, 1],
                  "reported_at": dsgen.fake_dates(rng, len(P)).dt.strftime("%Y-%m-%d")})
g, noise = hotspots(d)
dsgen.write_outputs(args.out, {"/home/user/incidents.csv": d},
                    {"hotspots": dsgen.table_truth(g), "noise": noise, "n_true_hotspots": k})
