"""viz-line-unemployment: quarterly US macro data (statsmodels macrodata) for a
seed-chosen window of years, with some unemployment readings missing ->
line chart of the yearly mean unemployment rate.

truth: chart = {kind line, title, xlabel, ylabel, values (yearly means, by year)}
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import dsgen, dsgen_viz

args = dsgen.parse_args(extra={"years": 16})
rng = dsgen.np_rng(args.seed)
from statsmodels.datasets import macrodata  # not statsmodels.api: much faster to import
m = macrodata.load_pandas().data.copy().reset_index(drop=True)
m["year"] = m["year"].astype(int)
m["quarter"] = m["quarter"].astype(int)
first = int(rng.integers(1959, 2009 - args.years + 1))
m = m[(m["year"] >= first) & (m["year"] < first + args.years)].reset_index(drop=True)
df = m[["realgdp", "realcons", "cpi", "unemp", "infl"]].copy()
df.insert(0, "period", [f"{y}Q{q}" for y, q in zip(m["year"], m["quarter"])])
# a few readings missing (never a whole year)
k = max(2, len(df) // 12)
miss = rng.choice(len(df), size=k, replace=False)
years = m["year"].to_numpy()
miss = [i for i in miss if (np.isin(np.flatnonzero(years == years[i]), miss)).sum() < 4]
df.loc[miss, "unemp"] = np.nan
yearly = df["unemp"].groupby(years).mean()
truth = {"chart": {"kind": "line", "title": "Average unemployment rate per year",
                   "xlabel": "Year", "ylabel": "Unemployment rate (%)",
                   "values": dsgen_viz.rounded(yearly.values, 4)},
         "first_year": first, "years": [int(y) for y in yearly.index]}
dsgen.write_outputs(args.out, {"/home/user/macro.csv": df}, truth)
