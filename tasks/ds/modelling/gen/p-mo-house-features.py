"""p-mo-house-features: house prices that need engineered features
(lot area = length x width, priced per m2 by district; age at sale from two
date strings).

VM:    /home/user/houses_train.csv  house_id, lot_length_m, lot_width_m,
       built (YYYY-MM-DD), sold (YYYY-MM-DD), rooms, district, price
       /home/user/houses_test.csv   the same without price.
Truth: "rmse", "r2": ds_predictions on the test prices.  Two reference
       linear models are fitted here: "raw" (length, width, rooms, district
       dummies) and "engineered" (area x district dummies, age, rooms).
       RMSE threshold = eng + 0.35 * (raw - eng); R2 threshold likewise.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args(extra={"rows": 1400})
rng = dsgen.np_rng(args.seed)
n = args.rows
L = np.round(rng.uniform(8, 45, n), 1)
W = np.round(rng.uniform(6, 35, n), 1)
dist = dsgen.choice(rng, ["Northgate", "Riverside", "Old Town", "Hillcrest", "Docklands"], n)
rate = {"Northgate": 300, "Riverside": 470, "Old Town": 700, "Hillcrest": 570, "Docklands": 380}
rate = {k: v * rng.uniform(0.9, 1.1) for k, v in rate.items()}
built = dsgen.fake_dates(rng, n, "1950-01-01", "2020-12-31")
sold = built + pd.to_timedelta(rng.integers(365, 365 * 40, n), unit="D")
sold = sold.where(sold <= pd.Timestamp("2025-06-30"), pd.Timestamp("2025-06-30") - pd.to_timedelta(rng.integers(0, 900, n), unit="D"))
sold = sold.where(sold > built + pd.Timedelta(days=200), built + pd.Timedelta(days=200))
age = (sold - built).dt.days / 365.25
rooms = np.clip(np.round(L * W / 120 + rng.normal(0, 1.2, n)), 1, 12).astype(int)
price = (40000 + np.array([rate[d] for d in dist]) * L * W - 1800 * age + 6000 * rooms
         + rng.normal(0, 15000, n))
price = np.round(np.maximum(price, 20000), -2)
d = pd.DataFrame({"house_id": dsgen.make_ids("H", n, rng, width=5), "lot_length_m": L, "lot_width_m": W,
                  "built": built.dt.strftime("%Y-%m-%d"), "sold": sold.dt.strftime("%Y-%m-%d"),
                  "rooms": rooms, "district": dist, "price": price})
nte = 400
test, train = d.iloc[:nte].reset_index(drop=True), d.iloc[nte:].reset_index(drop=True)

from sklearn.linear_model import LinearRegression  # noqa: E402
from sklearn.metrics import mean_squared_error, r2_score  # noqa: E402


def raw(x):
    return pd.concat([x[["lot_length_m", "lot_width_m", "rooms"]],
                      pd.get_dummies(x.district, dtype=float)], axis=1)


def eng(x):
    dm = pd.get_dummies(x.district, dtype=float)
    area = x.lot_length_m * x.lot_width_m
    f = dm.mul(area, axis=0).add_prefix("area_")
    f["age"] = (pd.to_datetime(x.sold) - pd.to_datetime(x.built)).dt.days / 365.25
    f["rooms"] = x.rooms
    return pd.concat([f, dm], axis=1)


res = {}
for name, f in (("raw", raw), ("eng", eng)):
    m = LinearRegression().fit(f(train), train.price)
    p = m.predict(f(test))
    res[name] = (mean_squared_error(test.price, p) ** 0.5, r2_score(test.price, p))
rmse_thr = res["eng"][0] + 0.35 * (res["raw"][0] - res["eng"][0])
r2_thr = res["eng"][1] - 0.35 * (res["eng"][1] - res["raw"][1])
extra = {"raw_rmse": res["raw"][0], "eng_rmse": res["eng"][0], "raw_r2": res["raw"][1], "eng_r2": res["eng"][1]}
dsgen.write_outputs(args.out, {"/home/user/houses_train.csv": train, "/home/user/houses_test.csv": test.drop(columns=["price"])},
                    {"rmse": dsgen.predictions_truth(test.house_id, test.price, "house_id", "price", "rmse", rmse_thr, **extra),
                     "r2": dsgen.predictions_truth(test.house_id, test.price, "house_id", "price", "r2", r2_thr, **extra)},
                    {"labels.csv": test[["house_id", "price"]]})
