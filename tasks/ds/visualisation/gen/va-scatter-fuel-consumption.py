"""va-scatter-fuel-consumption: a fleet log (weight in pounds, distance in km,
fuel in litres; a few vehicles unused or with fuel missing) -> scatter of fuel
consumption in L/100 km against weight in tonnes.

truth: chart = {kind scatter, title, xlabel, ylabel, values (L/100 km of the
kept vehicles, compared as a multiset)}; x = tonnes for the record.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_viz

args = dsgen.parse_args(extra={"rows": 70})
rng = dsgen.np_rng(args.seed)
n = args.rows
w_t = rng.uniform(1.0, 3.5, size=n)
slope = rng.uniform(2.0, 5.0)
cons = np.clip(3.0 + slope * w_t + rng.normal(0, 1.4, size=n) + rng.gamma(1.0, 1.0, size=n), 2.5, None)
dist = np.round(rng.uniform(150, 4000, size=n), 1)
fuel = np.round(cons * dist / 100, 2)
df = pd.DataFrame({"vehicle_id": dsgen.make_ids("V", n, rng, width=4),
                   "model": dsgen.choice(rng, ["Vanta", "Corsa", "Trek", "Mule", "Atlas"], n),
                   "weight_lb": np.round(w_t / 0.000453592).astype(int),
                   "distance_km": dist, "fuel_l": fuel})
unused = rng.choice(n, size=3, replace=False)
df.loc[unused, "distance_km"] = 0.0
df.loc[unused, "fuel_l"] = 0.0
df, _ = dsgen.inject_missing(df, ["fuel_l"], 0.05, rng)
keep = (df["distance_km"] > 0) & df["fuel_l"].notna()
k = df[keep]
y = k["fuel_l"] / k["distance_km"] * 100
x = k["weight_lb"] * 0.000453592
truth = {"chart": {"kind": "scatter", "title": "Fuel consumption vs vehicle weight",
                   "xlabel": "Weight (t)", "ylabel": "Fuel consumption (L/100 km)",
                   "values": dsgen_viz.rounded(y.values, 4)},
         "x": dsgen_viz.rounded(x.values, 4)}
dsgen.write_outputs(args.out, {"/home/user/fleet.csv": df}, truth)
