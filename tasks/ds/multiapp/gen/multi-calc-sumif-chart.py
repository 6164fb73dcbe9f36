"""multi-calc-sumif-chart: budget.xlsx with an "Expenses" sheet (date,
category, description, amount) and a "Summary" sheet listing the five
categories with an empty "total" column -> fill the totals in LibreOffice
Calc, save, then chart the Summary sheet from the terminal.

truth: summary = {columns: category, total; rows} (Summary order, 2 dp);
chart = {kind bar, title, xlabel, ylabel, labels, values}.
Also uploads the examples' Calc readiness probe to /tmp/deskenv-calc-ready.py.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_viz

CATS = {"Rent": (900, 1400), "Travel": (40, 600), "Food": (8, 90), "Software": (10, 300),
        "Office": (5, 150), "Training": (50, 800), "Utilities": (30, 250), "Marketing": (100, 1200)}
args = dsgen.parse_args(extra={"rows": 90})
rng = dsgen.np_rng(args.seed)
cats = sorted(list(CATS)[i] for i in rng.choice(len(CATS), size=5, replace=False))
ci = rng.integers(0, 5, size=args.rows)
lo = np.array([CATS[cats[i]][0] for i in ci]); hi = np.array([CATS[cats[i]][1] for i in ci])
amount = np.round(rng.uniform(lo, hi), 2)
exp = pd.DataFrame({"date": dsgen.fake_dates(rng, args.rows, "2024-01-01", "2024-06-30").dt.strftime("%Y-%m-%d"),
                    "category": [cats[i] for i in ci],
                    "description": [f"{cats[i].lower()} #{j + 1}" for j, i in enumerate(ci)],
                    "amount": amount}).sort_values("date", kind="mergesort").reset_index(drop=True)
tot = exp.groupby("category")["amount"].sum().reindex(cats).round(2)
summary = pd.DataFrame({"category": cats, "total": [None] * 5})
xlsx = dsgen.df_to_xlsx_bytes({"Expenses": exp, "Summary": summary})
truth = {"summary": {"columns": ["category", "total"], "rows": [[c, float(v)] for c, v in tot.items()]},
         "chart": {"kind": "bar", "title": "Spending by category", "xlabel": "Category",
                   "ylabel": "Total (EUR)", "labels": cats, "values": [float(v) for v in tot.values]}}
dsgen.write_outputs(args.out, {"/home/user/budget.xlsx": xlsx,
                               "/tmp/deskenv-calc-ready.py": dsgen_viz.calc_ready_script()}, truth)
