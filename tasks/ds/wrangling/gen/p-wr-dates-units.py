"""p-wr-dates-units: shipment records with mixed date formats and weights in
mixed units.

VM:    /home/user/shipments.csv  shipment_id, ship_date (YYYY-MM-DD,
       DD/MM/YYYY or "Mon DD YYYY"), weight (a number and a unit: kg, g or
       lb, with irregular spacing/case, e.g. "12.5 kg", "12500g", "27.56 LB").
Truth: "clean": ds_table {shipment_id, ship_date ISO, weight_kg (3 dp; 1 lb =
       0.45359237 kg)}; "monthly": {month YYYY-MM, shipments, total_kg (1 dp)}.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

LB = 0.45359237
args = dsgen.parse_args(extra={"rows": 400})
rng = dsgen.np_rng(args.seed)
n = args.rows
dates = dsgen.fake_dates(rng, n, "2024-01-01", "2024-12-31")
# day-first slashes only: days > 12 are plentiful, so month-first parsing fails visibly
shown, _ = dsgen.mix_date_formats(dates, rng, formats=("%Y-%m-%d", "%d/%m/%Y", "%b %d %Y"), p=[0.5, 0.3, 0.2])
kg = np.round(rng.lognormal(2.3, 0.8, n), 3)
unit = np.array(dsgen.choice(rng, ["kg", "g", "lb"], n, p=[0.6, 0.25, 0.15]))
txt = []
for w, u in zip(kg, unit):
    v = {"kg": f"{w:g}", "g": f"{round(w * 1000):d}", "lb": f"{w / LB:.2f}"}[u]
    uu = u.upper() if rng.random() < 0.2 else u
    txt.append(v + (" " if rng.random() < 0.7 else "") + uu)
true_kg = np.where(unit == "g", np.round(kg * 1000) / 1000, np.where(unit == "lb", np.round(kg / LB, 2) * LB, kg))
d = pd.DataFrame({"shipment_id": dsgen.make_ids("SH", n, rng, width=6), "ship_date": shown, "weight": txt})
clean = pd.DataFrame({"shipment_id": d.shipment_id, "ship_date": dates.dt.strftime("%Y-%m-%d"), "weight_kg": np.round(true_kg, 3)})
mon = clean.assign(month=clean.ship_date.str[:7]).groupby("month").agg(shipments=("shipment_id", "size"), total_kg=("weight_kg", "sum")).round(1).reset_index()
dsgen.write_outputs(args.out, {"/home/user/shipments.csv": d}, {"clean": dsgen.table_truth(clean), "monthly": dsgen.table_truth(mon)})
