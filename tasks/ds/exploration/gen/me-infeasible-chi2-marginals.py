"""me-infeasible-chi2-marginals (infeasible): asks for a chi-square test of
independence between smoking status and diagnosis, but the clinic's export
holds only the two marginal count tables (by smoking status, by diagnosis)
and no per-patient rows or cross-tabulation, so the joint table the test
needs cannot be recovered.

VM:    /home/user/counts_by_smoking.csv    smoking_status,patients
       /home/user/counts_by_diagnosis.csv  diagnosis,patients
       (same total; seeded counts).
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
n = int(rng.integers(400, 900))
sm = ["never", "former", "current"]
dx = ["asthma", "COPD", "bronchitis", "none"]
s = rng.multinomial(n, rng.dirichlet([4, 2, 2]))
d = rng.multinomial(n, rng.dirichlet([2, 1, 2, 4]))
dsgen.write_outputs(args.out, {"/home/user/counts_by_smoking.csv": pd.DataFrame({"smoking_status": sm, "patients": s}),
                               "/home/user/counts_by_diagnosis.csv": pd.DataFrame({"diagnosis": dx, "patients": d})}, {})
