"""viz-scatter-wine: a seed-drawn sample of scikit-learn's wine data (with
small measurement noise) -> scatter plot of colour intensity against alcohol.

truth: chart = {kind scatter, title, xlabel, ylabel, values (the y values, i.e.
colour intensity, in file order)}; x = alcohol for the record.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import dsgen

args = dsgen.parse_args(extra={"rows": 90})
rng = dsgen.np_rng(args.seed)
w = dsgen.load_sklearn("wine", target="cultivar")
w = dsgen.sample_rows(w, args.rows, rng, replace=False)
num = [c for c in w.columns if c != "cultivar"]
w[num] = w[num] * rng.normal(1.0, 0.01, size=w[num].shape)
w["alcohol"] = w["alcohol"].round(2)
w["color_intensity"] = w["color_intensity"].round(2)
for c in num:
    if c not in ("alcohol", "color_intensity"):
        w[c] = w[c].round(3)
w["cultivar"] = w["cultivar"].map({0: "A", 1: "B", 2: "C"})
truth = {"chart": {"kind": "scatter", "title": "Colour intensity vs alcohol",
                   "xlabel": "Alcohol (%)", "ylabel": "Colour intensity",
                   "values": [float(v) for v in w["color_intensity"]]},
         "x": [float(v) for v in w["alcohol"]]}
dsgen.write_outputs(args.out, {"/home/user/wine.csv": w}, truth)
