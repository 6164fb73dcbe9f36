"""p-ex-growth-correlations: Pearson correlation matrix of quarter-on-quarter
growth rates (statsmodels' bundled US macrodata).

VM:    /home/user/macro_quarters.csv  year, quarter, realgdp, realcons,
       realinv, realgovt, cpi, m1: a seeded window of 120-160 consecutive
       quarters, rows shuffled (they must be sorted before differencing).
Truth: "corr": ds_table {variable, realgdp, realcons, realinv, realgovt,
       cpi, m1}: corr of pct_change() of each series in time order, 3 dp.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402

V = ["realgdp", "realcons", "realinv", "realgovt", "cpi", "m1"]
args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
m = dsgen.load_statsmodels("macrodata")
m["year"], m["quarter"] = m.year.astype(int), m.quarter.astype(int)
n = int(rng.integers(120, 161))
start = int(rng.integers(0, len(m) - n + 1))
w = m.iloc[start:start + n][["year", "quarter"] + V].reset_index(drop=True)
c = w[V].pct_change().corr().round(3)
c.insert(0, "variable", c.index)
dsgen.write_outputs(args.out, {"/home/user/macro_quarters.csv": dsgen.shuffle(w, rng)}, {"corr": dsgen.table_truth(c.reset_index(drop=True))})
