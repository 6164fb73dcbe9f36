"""va-line-monthly-sessions: a web-session export (timestamps, unsorted; a
buggy export repeated many rows in a few months) -> line chart of the number
of distinct sessions per calendar month, chronological.

truth: chart = {kind line, title, xlabel, ylabel, values (monthly distinct counts)}
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_viz

args = dsgen.parse_args(extra={"months": 18})
rng = dsgen.np_rng(args.seed)
start = pd.Timestamp(int(rng.integers(2021, 2024)), int(rng.integers(1, 13)), 1)
months = pd.date_range(start, periods=args.months, freq="MS")
rows = []
level = rng.uniform(80, 160)
trend = rng.uniform(-2, 5)
amp = rng.uniform(10, 40)
phase = rng.uniform(0, 2 * np.pi)
for i, m in enumerate(months):
    lam = max(20, level + trend * i + amp * np.sin(2 * np.pi * m.month / 12 + phase))
    k = int(rng.poisson(lam))
    days = m.days_in_month
    secs = rng.integers(0, days * 86400, size=k)
    for s in secs:
        rows.append(m + pd.Timedelta(seconds=int(s)))
n = len(rows)
df = pd.DataFrame({"session_id": dsgen.make_ids("S", n, rng, width=7),
                   "started_at": pd.Series(rows).dt.strftime("%Y-%m-%d %H:%M:%S"),
                   "pages": np.maximum(1, rng.poisson(4, size=n)),
                   "device": dsgen.choice(rng, ["desktop", "mobile", "tablet"], n, p=[0.5, 0.4, 0.1])})
counts = df.groupby(df["started_at"].str[:7]).size().sort_index()
# the buggy export: rows of 3 months repeated (30-60 % of them)
bad = rng.choice(args.months, size=3, replace=False)
dups = []
for b in bad:
    key = months[b].strftime("%Y-%m")
    idx = np.flatnonzero(df["started_at"].str[:7].to_numpy() == key)
    take = rng.choice(idx, size=int(len(idx) * rng.uniform(0.3, 0.6)), replace=False)
    dups.append(df.iloc[take])
df = pd.concat([df] + dups, ignore_index=True)
df = dsgen.shuffle(df, rng)
truth = {"chart": {"kind": "line", "title": "Sessions per month", "xlabel": "Month",
                   "ylabel": "Sessions", "values": [float(v) for v in counts.values]},
         "months": list(counts.index)}
dsgen.write_outputs(args.out, {"/home/user/sessions.csv": df}, truth)
