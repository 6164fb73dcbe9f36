"""g-calc-unit-convert: shipments.xlsx, sheet "Shipments" (shipment_id,
weight, unit) with weights in kg, g or lb (unit spelled with stray case and
spaces) -> add a column D "weight_kg" (rounded to 3 decimals) in Calc.

truth: shipments = {columns: shipment_id, weight_kg; rows}.
Also uploads the Calc readiness probe to /tmp/deskenv-calc-ready.py.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_gui

args = dsgen.parse_args(extra={"rows": 60})
rng = dsgen.np_rng(args.seed)
n = args.rows
kg = np.round(rng.gamma(2.0, 6.0, size=n) + 0.2, 3)
unit = np.array(dsgen.choice(rng, ["kg", "g", "lb"], n, p=[0.5, 0.25, 0.25]), dtype=object)
weight = np.where(unit == "kg", kg, np.where(unit == "g", np.round(kg * 1000, 0), np.round(kg / 0.45359237, 2)))
# the true kg follow from the displayed (rounded) weight
true_kg = np.where(unit == "kg", weight, np.where(unit == "g", weight / 1000, weight * 0.45359237))
shown = unit.copy()
variants = {"kg": ["KG", "Kg", "kg "], "g": ["G", " g"], "lb": ["LB", "lb ", "Lb"]}
for i in rng.choice(n, size=n // 5, replace=False):
    opts = variants[unit[i]]
    shown[i] = opts[int(rng.integers(len(opts)))]
ids = dsgen.make_ids("S", n, rng, width=5)
df = pd.DataFrame({"shipment_id": ids, "weight": weight, "unit": shown})
truth = {"shipments": {"columns": ["shipment_id", "weight_kg"],
                       "rows": [[i, round(float(w), 3)] for i, w in zip(ids, true_kg)]},
         "rows": n}
dsgen.write_outputs(args.out, {"/home/user/shipments.xlsx": dsgen_gui.xlsx_bytes({"Shipments": df}),
                               **dsgen_gui.calc_vm_files("g-calc-unit-convert")}, truth)
