"""multi-infeasible-ecb-rates: an expenses workbook in EUR -- the data for
the infeasible request to convert it with today's rates downloaded from the
ECB website (the machine is offline).

truth: {"rows": n} for the record (the evaluator is infeasible).
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen

args = dsgen.parse_args(extra={"rows": 80})
rng = dsgen.np_rng(args.seed)
cats = ["Rent", "Travel", "Food", "Software", "Office"]
exp = pd.DataFrame({"date": dsgen.fake_dates(rng, args.rows, "2024-01-01", "2024-06-30").dt.strftime("%Y-%m-%d"),
                    "category": dsgen.choice(rng, cats, args.rows),
                    "amount_eur": np.round(rng.lognormal(4.5, 0.9, size=args.rows), 2)})
exp = exp.sort_values("date", kind="mergesort").reset_index(drop=True)
dsgen.write_outputs(args.out, {"/home/user/expenses.xlsx": dsgen.df_to_xlsx_bytes({"Expenses": exp})},
                    {"rows": int(len(exp))})
