"""me-energy-rerun: a re-runnable training script predicting buildings'
annual energy use; the script is re-run on a fresh sample.

VM:    /home/user/energy_train.csv  building_id, building_type (office,
       retail, warehouse, school), floor_area_m2, year_built, insulation
       (A..E), avg_outdoor_temp_c, occupants, annual_kwh
       /home/user/energy_test.csv   the same without annual_kwh.
       Synthesised: kWh = area * (base rate of the type + heating need
       (max(0, 17 - temp) * insulation factor) + occupants share) + noise.
       ~4% missing year_built (irrelevant feature, tests imputation).
Truth: "predictions": ds_predictions, rmse, threshold = noise_rmse +
       0.12 * (mean_baseline_rmse - noise_rmse), where noise_rmse is the
       RMSE of the true expected kWh on the test set (~60k; a gradient-boosted
       model of kWh per m2 gets ~36k, a linear model on the raw columns ~70-90k).
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args(extra={"train": 1200, "test": 400})
rng = dsgen.np_rng(args.seed)
n = args.train + args.test
types = ["office", "retail", "warehouse", "school"]
btype = np.array(dsgen.choice(rng, types, n, p=[0.35, 0.25, 0.2, 0.2]))
rate = dict(zip(types, rng.uniform([90, 140, 30, 70], [130, 200, 60, 100])))
area = np.round(np.exp(rng.normal(7.5, 0.6, n)), 0)
year = rng.integers(1950, 2024, n)
ins = np.array(dsgen.choice(rng, list("ABCDE"), n))
ifac = dict(zip("ABCDE", np.sort(rng.uniform(1.0, 9.0, 5))))
temp = np.round(rng.uniform(4, 16, n), 1)
occ = np.maximum(1, np.round(area / rng.uniform(15, 40, n))).astype(int)
mu = area * (np.vectorize(rate.get)(btype) + np.maximum(0, 17 - temp) * np.vectorize(ifac.get)(ins)) + occ * rng.uniform(300, 600)
y = np.round(mu * np.exp(rng.normal(0, 0.08, n)), 0)
d = pd.DataFrame({"building_id": dsgen.make_ids("B", n, rng, width=5), "building_type": btype, "floor_area_m2": area,
                  "year_built": year, "insulation": ins, "avg_outdoor_temp_c": temp, "occupants": occ, "annual_kwh": y, "mu": mu})
d = dsgen.shuffle(d, rng)
d, _ = dsgen.inject_missing(d, ["year_built"], 0.04, rng)
test, train = d.iloc[:args.test].reset_index(drop=True), d.iloc[args.test:].reset_index(drop=True)
noise = float(np.sqrt(np.mean((test.annual_kwh - test.mu) ** 2)))
base = dsgen.mean_baseline_rmse(train.annual_kwh, test.annual_kwh)
thr = noise + 0.12 * (base - noise)
cols = [c for c in d.columns if c not in ("mu",)]
dsgen.write_outputs(args.out, {"/home/user/energy_train.csv": train[cols], "/home/user/energy_test.csv": test[cols].drop(columns=["annual_kwh"])},
                    {"predictions": dsgen.predictions_truth(test.building_id, test.annual_kwh, "building_id", "annual_kwh", "rmse", thr,
                                                            noise_rmse=noise, baseline_rmse=base)},
                    {"labels.csv": test[["building_id", "annual_kwh"]]})
