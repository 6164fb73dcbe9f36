"""rz-infeasible-nps-by-channel: survey responses with a 0-10 recommend
score and a region; the request asks for a report of the Net Promoter
Score per acquisition channel, but the survey export records no channel
(nor anything that joins it to one).

VM:    /home/user/survey.csv  response_id, submitted, region, recommend
       (0-10), comment.
Truth: {"infeasible": true} for the record.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
n = int(rng.integers(250, 450))
comments = ["", "great service", "too expensive", "slow delivery", "easy to use", "support helped",
            "app crashes", ""]
df = pd.DataFrame({"response_id": dsgen.make_ids("R", n, rng, width=5),
                   "submitted": dsgen.fake_dates(rng, n, "2024-01-01", "2024-06-30").dt.strftime("%Y-%m-%d"),
                   "region": dsgen.choice(rng, ["North", "South", "East", "West"], n),
                   "recommend": np.clip(np.round(rng.normal(7.2, 2.1, n)), 0, 10).astype(int),
                   "comment": dsgen.choice(rng, comments, n)})
dsgen.write_outputs(args.out, {"/home/user/survey.csv": df},
                    {"infeasible": True, "columns": list(df.columns), "rows": n})
