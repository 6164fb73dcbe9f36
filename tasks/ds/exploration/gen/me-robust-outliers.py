"""me-robust-outliers: per-sensor outliers by the modified (MAD-based)
z-score, which the per-sensor spikes would hide from a plain z-score.

VM:    /home/user/sensor_readings.csv  reading_id, sensor_id (5-8 sensors
       with very different levels and spreads), timestamp, value; a few
       seeded spikes/dropouts per sensor and ~2% empty values.
Truth: "outliers": ds_table reading_id,sensor_id,value,robust_z for readings
       with |0.6745 * (value - median) / MAD| > 3.5, median and MAD computed
       per sensor over its non-missing values; robust_z rounded to 2.
       "n_zscore" (plain per-sensor |z| > 3.5) and "n_global" (robust z
       over all sensors pooled) for the record.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def robust(d, by="sensor_id"):
    g = d.groupby(by).value if by else None
    med = g.transform("median") if by else d.value.median()
    mad = (d.value - med).abs().groupby(d[by]).transform("median") if by else (d.value - med).abs().median()
    return 0.6745 * (d.value - med) / mad


args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
k = int(rng.integers(5, 9))
parts = []
t0 = pd.Timestamp("2024-06-01")
for i in range(k):
    m = int(rng.integers(150, 260))
    level, sd = rng.uniform(5, 500), None
    sd = level * rng.uniform(0.02, 0.1)
    v = rng.normal(level, sd, m)
    j = rng.choice(m, size=int(rng.integers(2, 8)), replace=False)
    v[j] = v[j] + rng.choice([-1, 1], len(j)) * sd * rng.uniform(3, 12, len(j))
    ts = t0 + pd.to_timedelta(np.arange(m) * 10, unit="min")
    parts.append(pd.DataFrame({"sensor_id": f"S{i + 1:02d}", "timestamp": ts.strftime("%Y-%m-%d %H:%M"), "value": np.round(v, 3)}))
d = pd.concat(parts, ignore_index=True)
d = d.sort_values(["timestamp", "sensor_id"]).reset_index(drop=True)
d.insert(0, "reading_id", dsgen.make_ids("R", len(d), rng, width=6))
d, _ = dsgen.inject_missing(d, ["value"], 0.02, rng)
ok = d[d.value.notna()].copy()
ok["robust_z"] = robust(ok)
out = ok[ok.robust_z.abs() > 3.5][["reading_id", "sensor_id", "value", "robust_z"]].round({"robust_z": 2})
z = ok.groupby("sensor_id").value.transform(lambda s: (s - s.mean()) / s.std())
gz = 0.6745 * (ok.value - ok.value.median()) / (ok.value - ok.value.median()).abs().median()
dsgen.write_outputs(args.out, {"/home/user/sensor_readings.csv": d},
                    {"outliers": dsgen.table_truth(out.reset_index(drop=True)), "n_outliers": len(out),
                     "n_zscore": int((z.abs() > 3.5).sum()), "n_global": int((gz.abs() > 3.5).sum())})
