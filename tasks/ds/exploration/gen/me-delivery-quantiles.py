"""me-delivery-quantiles: per-region delivery-time quantiles, for delivered
orders only, with durations computed from two timestamps.

VM:    /home/user/deliveries.csv  order_id, region, status (delivered,
       cancelled, returned), dispatched_at, delivered_at
       ("YYYY-MM-DD HH:MM"; delivered_at empty for cancelled orders, and
       for returned ones the time the parcel came back).
Truth: "quantiles": ds_table region,n,p10,median,p90 of delivery hours
       (delivered_at - dispatched_at) over status == delivered, pandas'
       default (linear) quantiles rounded to 2 decimals, sorted by median
       descending.  "quantiles_all_rows" (returned orders kept) for the record.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def table(d):
    h = (pd.to_datetime(d.delivered_at) - pd.to_datetime(d.dispatched_at)).dt.total_seconds() / 3600
    g = d.assign(h=h).groupby("region").h
    t = pd.DataFrame({"n": g.size(), "p10": g.quantile(0.1), "median": g.median(), "p90": g.quantile(0.9)}).round(2).reset_index()
    return t.sort_values("median", ascending=False).reset_index(drop=True)


args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
regions = dsgen.fake_cities(rng, int(rng.integers(4, 7)))
n = int(rng.integers(700, 1000))
reg = np.array(dsgen.choice(rng, regions, n))
scale = dict(zip(regions, rng.uniform(18, 60, len(regions))))
status = np.array(dsgen.choice(rng, ["delivered", "cancelled", "returned"], n, p=[0.82, 0.08, 0.10]))
disp = dsgen.fake_dates(rng, n, "2024-03-01", "2024-05-31") + pd.to_timedelta(rng.integers(6 * 60, 20 * 60, n), unit="min")
hours = np.vectorize(scale.get)(reg) * rng.gamma(3.0, 1 / 3.0, n)
hours = np.where(status == "returned", hours + rng.uniform(72, 240, n), hours)
deliv = disp + pd.to_timedelta(np.round(hours * 60), unit="min")
d = pd.DataFrame({"order_id": dsgen.make_ids("O", n, rng, width=6), "region": reg, "status": status,
                  "dispatched_at": disp.dt.strftime("%Y-%m-%d %H:%M"), "delivered_at": deliv.dt.strftime("%Y-%m-%d %H:%M")})
d.loc[d.status == "cancelled", "delivered_at"] = None
d = d.sort_values("dispatched_at").reset_index(drop=True)
dsgen.write_outputs(args.out, {"/home/user/deliveries.csv": d},
                    {"quantiles": dsgen.table_truth(table(d[d.status == "delivered"])),
                     "quantiles_all_rows": dsgen.table_truth(table(d.dropna(subset=["delivered_at"])))})
