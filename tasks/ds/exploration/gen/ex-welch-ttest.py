"""ex-welch-ttest: an A/B test of session length, with a Welch t-test.

VM:    /home/user/ab_test.csv  columns user_id,variant,session_minutes
       variants A and B of unequal size and spread; ~3% of session_minutes
       missing (empty); the effect of B is drawn per seed (sometimes ~0).
Truth: "t" and "p": scipy.stats.ttest_ind(B, A, equal_var=False) on the
       non-missing values; "t_student"/"p_student" the pooled-variance test
       (a wrong method, for the record).
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import stats  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
na, nb = int(rng.integers(120, 200)), int(rng.integers(50, 110))
mu = rng.uniform(8, 14)
effect = rng.choice([0.0, rng.uniform(0.5, 2.5)])
a = np.round(rng.gamma(4.0, mu / 4.0, na), 1)
b = np.round(rng.gamma(4.0, (mu + effect) / 4.0, nb) * rng.uniform(1.0, 1.0) + rng.normal(0, rng.uniform(1.5, 3.0), nb).clip(-3, 3), 1).clip(0.1)
df = pd.DataFrame({"variant": ["A"] * na + ["B"] * nb, "session_minutes": np.concatenate([a, b])})
df = dsgen.shuffle(df, rng)
df.insert(0, "user_id", dsgen.make_ids("U", len(df), rng, width=6))
df, _ = dsgen.inject_missing(df, ["session_minutes"], 0.03, rng)
A = df.loc[df.variant == "A", "session_minutes"].dropna()
B = df.loc[df.variant == "B", "session_minutes"].dropna()
w = stats.ttest_ind(B, A, equal_var=False)
s = stats.ttest_ind(B, A, equal_var=True)
dsgen.write_outputs(args.out, {"/home/user/ab_test.csv": df},
                    {"t": float(w.statistic), "p": float(w.pvalue), "t_student": float(s.statistic), "p_student": float(s.pvalue),
                     "n_a": len(A), "n_b": len(B)})
