"""ex-groupby-investment: per-firm summary of statsmodels' Grunfeld investment data.

VM:    /home/user/investment.csv  columns firm,year,invest,value,capital for a
       random subset of firms and a random window of years; values perturbed
       by +-3% (1 dp) so they differ by seed; rows shuffled.
Truth: "summary": per firm: years (row count), mean_invest (2 dp),
       max_value, invest_share (total invest / total capital, 3 dp), sorted by
       mean_invest descending.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
g = dsgen.load_statsmodels("grunfeld")
g["firm"] = g["firm"].astype(str)
g["year"] = g["year"].astype(int)
firms = sorted(rng.choice(sorted(g["firm"].unique()), size=int(rng.integers(5, 9)), replace=False))
y0 = int(rng.integers(1935, 1942))
y1 = int(rng.integers(1948, 1955))
d = g[g.firm.isin(firms) & g.year.between(y0, y1)].copy()
# drop a few firm-years so the counts differ between firms
d = d.drop(index=rng.choice(d.index, size=int(rng.integers(3, 9)), replace=False))
for c in ["invest", "value", "capital"]:
    d[c] = np.round(d[c] * rng.uniform(0.97, 1.03, len(d)), 1)
d = dsgen.shuffle(d[["firm", "year", "invest", "value", "capital"]], rng)
s = d.groupby("firm").agg(years=("year", "size"), mean_invest=("invest", "mean"), max_value=("value", "max"),
                          ti=("invest", "sum"), tc=("capital", "sum")).reset_index()
s["invest_share"] = (s.ti / s.tc).round(3)
s["mean_invest"] = s["mean_invest"].round(2)
s = s.drop(columns=["ti", "tc"]).sort_values("mean_invest", ascending=False).reset_index(drop=True)
dsgen.write_outputs(args.out, {"/home/user/investment.csv": d}, {"summary": dsgen.table_truth(s)})
