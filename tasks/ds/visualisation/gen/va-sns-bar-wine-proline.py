"""va-sns-bar-wine-proline: a seed-drawn sample of scikit-learn's wine data
-> seaborn bar chart of the mean proline per cultivar, bars sorted by the
mean, highest first (PNG too).

truth: chart = {kind bar, title, xlabel, ylabel, labels, values}
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_viz

args = dsgen.parse_args(extra={"rows": 120})
rng = dsgen.np_rng(args.seed)
w = dsgen.load_sklearn("wine", target="cultivar")
w = dsgen.sample_rows(w, args.rows, rng, replace=True)
num = [c for c in w.columns if c != "cultivar"]
w[num] = (w[num] * rng.normal(1.0, 0.03, size=w[num].shape)).round(3)
w["proline"] = w["proline"].round(0)
names = rng.permutation(["Barbera", "Nebbiolo", "Grignolino"])
# a seed-dependent shift so that the order of the bars changes between seeds
shift = dict(zip(range(3), rng.uniform(0.55, 1.45, size=3)))
w["proline"] = (w["proline"] * w["cultivar"].map(shift)).round(0)
w["cultivar"] = w["cultivar"].map(dict(enumerate(names)))
m = w.groupby("cultivar")["proline"].mean().sort_values(ascending=False, kind="mergesort")
truth = {"chart": {"kind": "bar", "title": "Mean proline by cultivar", "xlabel": "Cultivar",
                   "ylabel": "Mean proline (mg/L)", "labels": list(m.index),
                   "values": dsgen_viz.rounded(m.values, 3)}}
dsgen.write_outputs(args.out, {"/home/user/wine.csv": w}, truth)
