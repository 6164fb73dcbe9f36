"""p-report-growth-answer: a written answer whose last number is the largest
year-over-year growth of net revenue among product categories.

VM:    /home/user/sales.csv  date (YYYY-MM-DD, 2023-2024), category, amount
       (EUR; refunds are negative amounts, ~6% of rows).
Truth: "growth_pct": 100 * (net2024 / net2023 - 1) of the category with the
       largest such growth; "category" for the record; "gross_growth_pct" is
       the same computed without refunds (a gaming check that it differs).
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
cats = ["Outdoor", "Kitchen", "Toys", "Books", "Electronics"]
rows = []
growth = dict(zip(cats, rng.permutation([0.38, 0.22, 0.09, -0.05, 0.15]) + rng.uniform(-0.04, 0.04, 5)))
ref_rate = {c: rng.uniform(0.03, 0.12) for c in cats}
for c in cats:
    base_n = int(rng.integers(250, 450))
    for year, n in ((2023, base_n), (2024, int(base_n * (1 + growth[c])))):
        dd = dsgen.fake_dates(rng, n, f"{year}-01-01", f"{year}-12-31").dt.strftime("%Y-%m-%d")
        amt = np.round(rng.lognormal(3.6, 0.5, n), 2)
        refund = rng.random(n) < (ref_rate[c] * (2.2 if year == 2024 else 1.0))
        amt[refund] = -np.round(amt[refund] * rng.uniform(0.3, 1.0, refund.sum()), 2)
        rows.append(pd.DataFrame({"date": dd, "category": c, "amount": amt}))
d = dsgen.shuffle(pd.concat(rows, ignore_index=True), rng)
y = d.date.str[:4]


def growth_of(x):
    t = x.groupby([x.category, x.date.str[:4]]).amount.sum().unstack()
    g = 100 * (t["2024"] / t["2023"] - 1)
    return g.idxmax(), float(g.max())


cat, g = growth_of(d)
_, gg = growth_of(d[d.amount > 0])
dsgen.write_outputs(args.out, {"/home/user/sales.csv": d}, {"growth_pct": round(g, 1), "category": cat, "gross_growth_pct": gg})
