"""p-ex-infeasible-paired-noids (infeasible): a paired test is requested, but
the two anonymised score files have no student identifier and different row
counts, so before and after scores cannot be matched.

VM:    /home/user/scores_autumn.csv, /home/user/scores_spring.csv
       (class, score) with different numbers of rows.
Truth: {} (the evaluator is "infeasible").
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
n1 = int(rng.integers(110, 130))
n2 = n1 - int(rng.integers(5, 15))
cls = ["7A", "7B", "7C", "7D"]
f = lambda n, mu: pd.DataFrame({"class": dsgen.choice(rng, cls, n), "score": np.clip(np.round(rng.normal(mu, 12, n)), 0, 100).astype(int)})
dsgen.write_outputs(args.out, {"/home/user/scores_autumn.csv": f(n1, 61), "/home/user/scores_spring.csv": f(n2, 65)}, {})
