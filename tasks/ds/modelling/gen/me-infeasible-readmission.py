"""me-infeasible-readmission (infeasible): asks for a 30-day readmission
classifier, but the anonymised admissions extract holds no readmission
outcome and no patient identifier that would let one derive it (each row
is one admission; repeat stays of the same patient cannot be linked).

VM:    /home/user/admissions.csv      admission_id, age, sex, ward,
       length_of_stay_days, n_diagnoses, n_prior_admissions (count before
       this stay, from the referral letter), discharge_month (YYYY-MM)
       /home/user/admissions_new.csv  the same columns for new discharges.
Truth: {} (the task is infeasible; the evaluator is "infeasible").
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)


def make(n, prefix):
    months = pd.period_range("2024-01", "2024-12", freq="M").astype(str).tolist()
    return pd.DataFrame({
        "admission_id": dsgen.make_ids(prefix, n, rng, width=6),
        "age": rng.integers(18, 96, n),
        "sex": dsgen.choice(rng, ["F", "M"], n),
        "ward": dsgen.choice(rng, ["cardiology", "general medicine", "orthopaedics", "respiratory", "surgery"], n),
        "length_of_stay_days": rng.integers(1, 30, n),
        "n_diagnoses": rng.integers(1, 12, n),
        "n_prior_admissions": rng.poisson(0.8, n),
        "discharge_month": dsgen.choice(rng, months, n),
    })


dsgen.write_outputs(args.out, {"/home/user/admissions.csv": make(int(rng.integers(900, 1300)), "A"),
                               "/home/user/admissions_new.csv": make(int(rng.integers(200, 300)), "N")}, {})
