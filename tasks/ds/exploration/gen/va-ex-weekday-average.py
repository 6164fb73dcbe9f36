"""va-ex-weekday-average: a support-call log (one row per call, timestamps);
some calendar days have no calls at all -> table weekday, mean_daily_calls:
the mean number of calls per calendar day for each weekday over the whole
period (days without calls count as 0), Monday to Sunday, 2 dp.

truth: table = {columns, rows}
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_viz

args = dsgen.parse_args(extra={"weeks": 16})
rng = dsgen.np_rng(args.seed)
start = pd.Timestamp("2024-01-01") + pd.Timedelta(weeks=int(rng.integers(0, 30)))  # a Monday
days = pd.date_range(start, periods=7 * args.weeks, freq="D")
wd = rng.uniform(5, 30, size=7)
wd[5:] *= rng.uniform(0.1, 0.5)
k = rng.poisson(wd[days.dayofweek])
# outages / holidays: whole days without calls, more of them on some weekdays
pz = rng.uniform(0.0, 0.35, size=7)
zero = rng.random(len(days)) < pz[days.dayofweek]
zero[0] = zero[-1] = False  # the log starts and ends on days with calls
k[zero] = 0
k[0] = max(k[0], 1); k[-1] = max(k[-1], 1)
ts = []
for d, c in zip(days, k):
    ts += [d + pd.Timedelta(seconds=int(s)) for s in np.sort(rng.integers(7 * 3600, 20 * 3600, size=c))]
n = len(ts)
df = pd.DataFrame({"call_id": dsgen.make_ids("K", n, rng, width=6),
                   "started": pd.Series(ts).dt.strftime("%d/%m/%Y %H:%M"),
                   "agent": dsgen.choice(rng, ["amy", "bo", "cy", "dee"], n),
                   "minutes": np.round(rng.gamma(2.0, 3.0, size=n), 1)})
daily = pd.Series(k, index=days)
names = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
m = daily.groupby(days.dayofweek).mean()
truth = {"table": {"columns": ["weekday", "mean_daily_calls"],
                   "rows": [[names[i], round(float(m[i]), 2)] for i in range(7)]},
         "first_day": str(days[0].date()), "last_day": str(days[-1].date())}
dsgen.write_outputs(args.out, {"/home/user/calls.csv": df}, truth)
