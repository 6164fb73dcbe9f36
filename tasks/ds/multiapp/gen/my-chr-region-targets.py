"""my-chr-region-targets: targets.html (Q3 2024 sales target per region,
by region NAME, money like "EUR 120,000") shown in Chromium; sales.db
(regions: region_code, region_name; sales: sale_id, region_code, sale_date,
channel incl. 'test' rows, amount) -> attainment per region.

truth: attainment = {columns: region, actual, target, attainment_pct; rows}
sorted by attainment_pct descending (Q3 2024, test channel excluded).
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_gui

NAMES = ["Northern Coast", "Capital Area", "Lake District", "Southern Plains", "Eastern Hills",
         "Western Valley", "Central Belt", "Island Group", "River Delta", "Mountain West"]
args = dsgen.parse_args(extra={"rows": 1400})
rng = dsgen.np_rng(args.seed)
k = int(rng.integers(5, 9))
names = [NAMES[i] for i in rng.choice(len(NAMES), size=k, replace=False)]
codes = [f"R{int(c):02d}" for c in rng.choice(np.arange(10, 99), size=k, replace=False)]
regions = pd.DataFrame({"region_code": codes, "region_name": names})
n = args.rows
w = rng.dirichlet([3] * k)
ri = rng.choice(k, size=n, p=w)
sales = pd.DataFrame({"sale_id": np.arange(100001, 100001 + n),
                      "region_code": [codes[i] for i in ri],
                      "sale_date": dsgen.fake_dates(rng, n, "2024-04-01", "2024-12-31").dt.strftime("%Y-%m-%d"),
                      "channel": dsgen.choice(rng, ["store", "online", "test"], n, p=[0.55, 0.37, 0.08]),
                      "amount": np.round(rng.lognormal(5.0, 0.7, size=n), 2)})
q3 = sales[(sales.sale_date >= "2024-07-01") & (sales.sale_date <= "2024-09-30") & (sales.channel != "test")]
act = q3.groupby("region_code").amount.sum()
actual = np.array([float(act.get(c, 0.0)) for c in codes])
while True:  # distinct rounded attainments, so that the requested order is unambiguous
    target = np.maximum(1000.0, np.round(actual * rng.uniform(0.75, 1.3, size=k) / 1000) * 1000)
    pct = 100 * actual / target
    if len(set(np.round(pct, 1))) == k and target.min() > 0:
        break
order = np.argsort(-pct, kind="stable")
rows = [[names[i], round(actual[i], 2), float(target[i]), round(float(pct[i]), 1)] for i in order]
page_order = rng.permutation(k)
body = ("<h1>Regional sales targets</h1>\n<p class=\"note\">Quarter: Q3 2024 (July to September). Targets in euros, "
        "excluding test transactions.</p>\n"
        + dsgen_gui.html_table(["Region", "Q3 target"], [[names[i], f"EUR {target[i]:,.0f}"] for i in page_order])
        + "\n<p class=\"note\">Approved by the sales board.</p>")
truth = {"attainment": {"columns": ["region", "actual", "target", "attainment_pct"], "rows": rows}}
dsgen.write_outputs(args.out, {"/home/user/targets.html": dsgen_gui.html_page("Regional sales targets", body),
                               "/home/user/sales.db": {"regions": regions, "sales": dsgen.shuffle(sales, rng)}}, truth)
