"""wr-reshape-sst-long: a wide monthly table (statsmodels' elnino sea-surface
temperatures) to long format.

VM:    /home/user/sst_wide.csv  columns YEAR,JAN,...,DEC for a random window of
       years; values perturbed (+N(0,0.15), 2 dp) so that they differ by seed;
       ~8% of the cells hold the sentinel -99.9 (missing); one or two year rows
       appear twice (exact duplicates).
Truth: "long": columns year,month,sst (month 1..12), sentinel cells dropped,
       one row per (year, month), sorted by year, month.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
el = dsgen.load_statsmodels("elnino")
el["YEAR"] = el["YEAR"].astype(int)
months = list(el.columns[1:])
span = int(rng.integers(15, 26))
first = int(rng.integers(0, len(el) - span + 1))
w = el.iloc[first:first + span].reset_index(drop=True)
vals = w[months].to_numpy() + rng.normal(0, 0.15, size=(span, 12))
vals = np.round(vals, 2)
miss = rng.random(vals.shape) < 0.08
vals[miss] = -99.9
w = pd.concat([w[["YEAR"]], pd.DataFrame(vals, columns=months)], axis=1)
w, _ = dsgen.inject_duplicates(w, int(rng.integers(1, 3)), rng)

long = w.drop_duplicates().melt(id_vars="YEAR", var_name="m", value_name="sst")
long = long[long["sst"] != -99.9]
long["month"] = long["m"].map({m: i + 1 for i, m in enumerate(months)})
long = long.rename(columns={"YEAR": "year"})[["year", "month", "sst"]].sort_values(["year", "month"]).reset_index(drop=True)
dsgen.write_outputs(args.out, {"/home/user/sst_wide.csv": w.to_csv(index=False, lineterminator="\n", float_format="%.2f")},
                    {"long": dsgen.table_truth(long), "years": span, "missing": int(miss.sum())})
