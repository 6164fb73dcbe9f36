"""va-line-rolling-deliveries: one row per delivery (timestamp); on some days
(Sundays, depot closures) nothing is delivered -> line chart of the 7-day
rolling mean of deliveries per calendar day, days without deliveries counted
as 0, the first 6 days (no full window) left out.

truth: chart = {kind line, title, xlabel, ylabel, values}
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_viz

args = dsgen.parse_args(extra={"days": 84})
rng = dsgen.np_rng(args.seed)
start = pd.Timestamp("2024-01-01") + pd.Timedelta(days=int(rng.integers(0, 300)))
days = pd.date_range(start, periods=args.days, freq="D")
lam = rng.uniform(15, 40) + rng.uniform(-0.15, 0.3) * np.arange(args.days)
lam = lam * (1 + 0.4 * np.sin(np.arange(args.days) * 2 * np.pi / rng.uniform(20, 40)))
k = rng.poisson(np.clip(lam, 3, None))
closed = (days.dayofweek == 6)
closed |= np.isin(np.arange(args.days), rng.choice(args.days, size=5, replace=False))
closed[0] = closed[-1] = False  # the log starts and ends on days with deliveries
k[closed] = 0
k[0] = max(k[0], 1); k[-1] = max(k[-1], 1)
ts = []
for d, c in zip(days, k):
    ts += [d + pd.Timedelta(seconds=int(s)) for s in np.sort(rng.integers(6 * 3600, 21 * 3600, size=c))]
n = len(ts)
df = pd.DataFrame({"delivery_id": dsgen.make_ids("D", n, rng, width=6),
                   "delivered_at": pd.Series(ts).dt.strftime("%Y-%m-%dT%H:%M:%S"),
                   "driver": dsgen.choice(rng, ["ana", "ben", "chen", "dia", "eli"], n),
                   "parcels": np.maximum(1, rng.poisson(2, size=n))})
daily = pd.Series(k, index=days)
roll = daily.rolling(7).mean().dropna()
truth = {"chart": {"kind": "line", "title": "Deliveries per day, 7-day rolling mean", "xlabel": "Date",
                   "ylabel": "Deliveries per day", "values": dsgen_viz.rounded(roll.values, 4)},
         "first_day": str(days[0].date()), "last_day": str(days[-1].date())}
dsgen.write_outputs(args.out, {"/home/user/deliveries.csv": df}, truth)
