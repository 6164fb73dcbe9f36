"""va-mp-ticket-median: a helpdesk ticket export (priority written in mixed
case, some resolution times blank) -> in Mousepad, write a script that saves
a bar chart of the median resolution time per priority, bars in the fixed
order Low, Medium, High, Critical; run it.  Checked again on other data.

truth: chart = {kind bar, title, xlabel, ylabel, labels, values}
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_viz

args = dsgen.parse_args(extra={"rows": 240})
rng = dsgen.np_rng(args.seed)
n = args.rows
pri = ["Low", "Medium", "High", "Critical"]
p = rng.dirichlet(np.ones(4) * 3)
lev = dsgen.choice(rng, pri, n, p=p)
# typical hours per priority, in a seed-dependent (not monotone) order
base = dict(zip(pri, rng.permutation(rng.uniform(3, 60, size=4))))
sig = dict(zip(pri, rng.uniform(0.2, 1.1, size=4)))
hours = np.round(np.array([base[x] * rng.lognormal(0, sig[x]) for x in lev]), 1)
shown = [x if rng.random() > 0.3 else (x.lower() if rng.random() < 0.5 else x.upper()) for x in lev]
df = pd.DataFrame({"ticket_id": dsgen.make_ids("T", n, rng, width=5), "priority": shown,
                   "team": dsgen.choice(rng, ["infra", "apps", "data"], n), "resolution_hours": hours})
df, _ = dsgen.inject_missing(df, ["resolution_hours"], 0.07, rng)
med = df.groupby(df["priority"].str.capitalize())["resolution_hours"].median().reindex(pri)
assert med.notna().all()
truth = {"chart": {"kind": "bar", "title": "Median resolution time by priority", "xlabel": "Priority",
                   "ylabel": "Median resolution time (h)", "labels": pri,
                   "values": dsgen_viz.rounded(med.values, 3)}}
dsgen.write_outputs(args.out, {"/home/user/tickets.csv": df}, truth)
