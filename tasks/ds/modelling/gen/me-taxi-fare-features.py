"""me-taxi-fare-features: predict taxi fares; the signal is in engineered
features (trip distance from the coordinates, hour of day from the
timestamp), not in the raw columns.

VM:    /home/user/trips_train.csv  trip_id, pickup_time ("YYYY-MM-DD HH:MM"),
       pickup_x_km, pickup_y_km, dropoff_x_km, dropoff_y_km, passengers, fare
       /home/user/trips_test.csv   the same without fare.
       Synthesised: fare = flag fall + per-km rate * euclidean distance
       + rush-hour surcharge (07-09h and 16-18h, seeded) + night surcharge
       (22-05h) + small noise; passengers irrelevant.
Truth: "predictions": ds_predictions, rmse, threshold = noise_rmse +
       0.15 * (mean_baseline_rmse - noise_rmse) (a linear model on distance
       and hour-of-day dummies reaches about noise_rmse; a linear model or a
       default random forest on the raw columns does far worse).
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args(extra={"train": 1500, "test": 500})
rng = dsgen.np_rng(args.seed)
n = args.train + args.test
px, py = rng.uniform(0, 20, n), rng.uniform(0, 20, n)
ang = rng.uniform(0, 2 * np.pi, n)
L = rng.gamma(2.0, rng.uniform(2.0, 3.5), n)
dx, dy = np.clip(px + L * np.cos(ang), 0, 20), np.clip(py + L * np.sin(ang), 0, 20)
px, py, dx, dy = (np.round(v, 3) for v in (px, py, dx, dy))
dist = np.hypot(dx - px, dy - py)
t = dsgen.fake_dates(rng, n, "2024-01-01", "2024-06-30") + pd.to_timedelta(rng.integers(0, 24 * 60, n), unit="min")
hour = t.dt.hour.to_numpy()
flag, rate = rng.uniform(2.5, 4.5), rng.uniform(1.4, 2.4)
rush = rng.uniform(3.0, 6.0) * (((hour >= 7) & (hour <= 9)) | ((hour >= 16) & (hour <= 18)))
night = rng.uniform(2.0, 4.0) * ((hour >= 22) | (hour <= 5))
mu = flag + rate * dist + rush + night
fare = np.round(mu + rng.normal(0, 0.6, n), 2)
d = pd.DataFrame({"trip_id": dsgen.make_ids("T", n, rng, width=7), "pickup_time": t.dt.strftime("%Y-%m-%d %H:%M"),
                  "pickup_x_km": px, "pickup_y_km": py, "dropoff_x_km": dx, "dropoff_y_km": dy,
                  "passengers": rng.integers(1, 5, n), "fare": fare, "mu": mu})
d = d.sort_values("pickup_time").reset_index(drop=True)
idx = rng.permutation(n)
test = d.iloc[np.sort(idx[:args.test])].reset_index(drop=True)
train = d.iloc[np.sort(idx[args.test:])].reset_index(drop=True)
noise = float(np.sqrt(np.mean((test.fare - test.mu) ** 2)))
base = dsgen.mean_baseline_rmse(train.fare, test.fare)
thr = noise + 0.15 * (base - noise)
cols = [c for c in d.columns if c != "mu"]
dsgen.write_outputs(args.out, {"/home/user/trips_train.csv": train[cols], "/home/user/trips_test.csv": test[cols].drop(columns=["fare"])},
                    {"predictions": dsgen.predictions_truth(test.trip_id, test.fare, "trip_id", "fare", "rmse", thr, noise_rmse=noise, baseline_rmse=base)},
                    {"labels.csv": test[["trip_id", "fare"]]})
