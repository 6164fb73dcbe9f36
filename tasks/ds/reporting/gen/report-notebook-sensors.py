"""report-notebook-sensors: sensor readings with an error code (-999) for
failed readings -> a notebook that writes per-sensor statistics of the valid
readings.

truth: stats = {columns: sensor, n, mean, std (sample, ddof=1); rows} sorted by
sensor, rounded to 3 dp; notebook = {"contains": the sensor ids}, which the
notebook's displayed table shows.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen

args = dsgen.parse_args(extra={"rows": 600})
rng = dsgen.np_rng(args.seed)
k = int(rng.integers(4, 7))
sensors = sorted(f"S{int(i):02d}" for i in rng.choice(40, size=k, replace=False) + 1)
base = rng.uniform(15, 30, size=k)
spread = rng.uniform(0.5, 3.0, size=k)
si = rng.integers(0, k, size=args.rows)
ts = pd.Timestamp("2024-03-01") + pd.to_timedelta(np.sort(rng.integers(0, 14 * 24 * 60, size=args.rows)), unit="min")
reading = np.round(base[si] + rng.normal(0, 1, size=args.rows) * spread[si], 2)
df = pd.DataFrame({"timestamp": ts.strftime("%Y-%m-%d %H:%M"), "sensor": [sensors[i] for i in si],
                   "reading": reading})
bad = rng.choice(args.rows, size=int(args.rows * rng.uniform(0.03, 0.08)), replace=False)
df.loc[bad, "reading"] = -999.0
v = df[df["reading"] != -999.0]
st = v.groupby("sensor")["reading"].agg(n="count", mean="mean", std="std").reset_index()
st[["mean", "std"]] = st[["mean", "std"]].round(3)
truth = {"stats": dsgen.table_truth(st), "n_bad": int(len(bad)),
         "notebook": {"contains": list(st["sensor"])}}
dsgen.write_outputs(args.out, {"/home/user/sensors.csv": df}, truth)
