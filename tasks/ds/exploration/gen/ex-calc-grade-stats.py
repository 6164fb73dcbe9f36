"""ex-calc-grade-stats: summary statistics of a grade sheet, in LibreOffice Calc.

VM:    /home/user/grades.xlsx  one sheet, header row student,class,score and
       40-90 students (classes A/B/C, scores 0-100 with one decimal).
       /tmp/deskenv-calc-ready.py  the Calc readiness probe (a copy of
       tasks/examples/data/calc_ready.py) used by the setup.
Truth: "mean" (all scores), "mean_b" (class B), "passed" (score >= 50).
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
n = int(rng.integers(40, 91))
cls = dsgen.choice(rng, ["A", "B", "C"], n)
mu = {k: rng.uniform(45, 75) for k in "ABC"}
score = np.clip(np.round([rng.normal(mu[c], 15) for c in cls], 1), 0, 100)
d = pd.DataFrame({"student": dsgen.fake_names(rng, n), "class": cls, "score": score})
probe = (Path(__file__).resolve().parents[3] / "examples" / "data" / "calc_ready.py").read_bytes()
dsgen.write_outputs(args.out, {"/home/user/grades.xlsx": dsgen.df_to_xlsx_bytes({"grades": d}), "/tmp/deskenv-calc-ready.py": probe},
                    {"mean": float(d.score.mean()), "mean_b": float(d.score[d["class"] == "B"].mean()),
                     "passed": int((d.score >= 50).sum()), "n": n})
