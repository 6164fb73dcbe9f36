"""g-calc-describe-macro: macro.xlsx with sheet "Data" (period, realgdp_growth,
unemp, infl; a random window of statsmodels' macrodata, with blank and "n/a"
cells) and sheet "Stats" (statistics count, mean, median, std, p90 down
A2:A6, the three variables across B1:D1) -> fill the statistics in Calc.

truth: stats = {columns: statistic, realgdp_growth, unemp, infl; rows} (3 dp).
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_gui

args = dsgen.parse_args(extra={"rows": 120})
rng = dsgen.np_rng(args.seed)
m = dsgen.load_statsmodels("macrodata")
m["realgdp_growth"] = (m.realgdp.pct_change() * 400).round(3)
m = m.iloc[1:].reset_index(drop=True)
start = int(rng.integers(0, len(m) - args.rows))
w = m.iloc[start:start + args.rows].reset_index(drop=True)
df = pd.DataFrame({"period": [f"{int(y)}Q{int(q)}" for y, q in zip(w.year, w.quarter)],
                   "realgdp_growth": w.realgdp_growth.round(3), "unemp": w.unemp.round(2), "infl": w.infl.round(2)})
clean = df.copy()
shown = df.astype(object)
for c in ["realgdp_growth", "unemp", "infl"]:
    pos = rng.choice(len(df), size=int(rng.integers(4, 10)), replace=False)
    for k, p in enumerate(pos):
        shown.loc[p, c] = None if k % 2 == 0 else "n/a"
        clean.loc[p, c] = np.nan
V = ["realgdp_growth", "unemp", "infl"]
stats = {"count": lambda s: float(s.count()), "mean": lambda s: s.mean(), "median": lambda s: s.median(),
         "std": lambda s: s.std(ddof=1), "p90": lambda s: s.quantile(0.9)}
rows = [[k] + [round(float(f(clean[v].dropna())), 3) for v in V] for k, f in stats.items()]
sheet = pd.DataFrame({"statistic": list(stats), **{v: [None] * 5 for v in V}})
truth = {"stats": {"columns": ["statistic"] + V, "rows": rows}}
dsgen.write_outputs(args.out, {"/home/user/macro.xlsx": dsgen_gui.xlsx_bytes({"Data": shown, "Stats": sheet}),
                               **dsgen_gui.calc_vm_files("g-calc-describe-macro")}, truth)
