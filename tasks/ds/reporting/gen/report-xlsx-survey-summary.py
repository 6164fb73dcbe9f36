"""report-xlsx-survey-summary: a seed-drawn sample of the 1974 Redbook
marriage survey (statsmodels "fair" data, the affairs column dropped) ->
per-religiousness summary table on an .xlsx sheet "Summary".

truth: summary = {columns: religious, respondents, mean_age, mean_rating,
pct_with_children; rows} sorted by respondents descending.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen

args = dsgen.parse_args(extra={"rows": 1200})
rng = dsgen.np_rng(args.seed)
from statsmodels.datasets import fair  # not statsmodels.api: much faster to import
f = fair.load_pandas().data.copy().reset_index(drop=True)
f = dsgen.sample_rows(f, args.rows, rng, replace=False)
df = pd.DataFrame({
    "respondent": np.arange(1, args.rows + 1),
    "age": f["age"].astype(float).values,
    "yrs_married": f["yrs_married"].values,
    "children": f["children"].values,
    "religious": f["religious"].map({1.0: "not", 2.0: "mildly", 3.0: "fairly", 4.0: "strongly"}).values,
    "educ": f["educ"].astype(int).values,
    "rate_marriage": f["rate_marriage"].astype(int).values,
})
s = df.groupby("religious").agg(respondents=("respondent", "count"), mean_age=("age", "mean"),
                                mean_rating=("rate_marriage", "mean"),
                                pct_with_children=("children", lambda c: 100 * (c > 0).mean())).reset_index()
s = s.sort_values("respondents", ascending=False, kind="mergesort").reset_index(drop=True)
s[["mean_age", "mean_rating", "pct_with_children"]] = s[["mean_age", "mean_rating", "pct_with_children"]].round(2)
truth = {"summary": dsgen.table_truth(s)}
dsgen.write_outputs(args.out, {"/home/user/survey.csv": df}, truth)
