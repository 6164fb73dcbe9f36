"""va-age-band-bars: a customer list with birth dates (some blank) -> bar
chart of the number of customers per age band (age in full years on
2025-01-01: 18-29, 30-44, 45-59, 60+), bands in that order.

truth: chart = {kind bar, title, xlabel, ylabel, labels, values}
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_viz

args = dsgen.parse_args(extra={"rows": 900})
rng = dsgen.np_rng(args.seed)
n = args.rows
# ages concentrated near the band edges' neighbourhood so that an off-by-one age matters
mu = rng.uniform(30, 50)
age_days = np.clip(rng.normal(mu, rng.uniform(10, 16), size=n), 18.01, 89) * 365.25
ref = pd.Timestamp("2025-01-01")
birth = ref - pd.to_timedelta(np.round(age_days), unit="D")
df = pd.DataFrame({"customer_id": dsgen.make_ids("C", n, rng, width=5),
                   "name": dsgen.fake_names(rng, n, unique=False),
                   "birth_date": pd.Series(birth).dt.strftime("%Y-%m-%d"),
                   "city": dsgen.choice(rng, dsgen.fake_cities(rng, 6), n)})
df, _ = dsgen.inject_missing(df, ["birth_date"], 0.05, rng)
b = pd.to_datetime(df["birth_date"]).dropna()
age = ref.year - b.dt.year - ((b.dt.month > ref.month) | ((b.dt.month == ref.month) & (b.dt.day > ref.day))).astype(int)
assert age.min() >= 18
bands = ["18-29", "30-44", "45-59", "60+"]
band = pd.cut(age, [17, 29, 44, 59, 200], labels=bands)
cnt = band.value_counts().reindex(bands)
truth = {"chart": {"kind": "bar", "title": "Customers by age band", "xlabel": "Age band",
                   "ylabel": "Customers", "labels": bands, "values": [float(v) for v in cnt.values]}}
dsgen.write_outputs(args.out, {"/home/user/customers.csv": df}, truth)
