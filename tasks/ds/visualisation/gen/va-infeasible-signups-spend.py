"""va-infeasible-signups-spend (infeasible): weekly sign-ups are provided,
the marketing-spend file the task names is not; the requested chart (sign-ups
against spend) cannot be drawn.

truth: {} (the evaluator is `infeasible`)
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_viz

args = dsgen.parse_args(extra={"weeks": 40})
rng = dsgen.np_rng(args.seed)
start = pd.Timestamp("2024-01-01") + pd.Timedelta(weeks=int(rng.integers(0, 10)))
weeks = pd.date_range(start, periods=args.weeks, freq="W-MON")
df = pd.DataFrame({"week_start": weeks.strftime("%Y-%m-%d"),
                   "signups": rng.poisson(rng.uniform(80, 200), size=args.weeks),
                   "channel_top": dsgen.choice(rng, ["search", "social", "referral", "email"], args.weeks)})
dsgen.write_outputs(args.out, {"/home/user/signups.csv": df}, {"weeks": args.weeks})
