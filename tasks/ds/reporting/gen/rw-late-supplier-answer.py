"""rw-late-supplier-answer: which supplier delivers late most often?

VM:    /home/user/deliveries.csv  delivery_id,supplier,promised_date,delivered_date
       supplier names in inconsistent spellings (case, stray/double spaces);
       delivered_date empty for deliveries still open (excluded); dates ISO.
Truth: "answer": one row supplier,late_pct -- the canonical (Title Case) name
       of the supplier with the highest share of late deliveries (delivered
       strictly after promised) among its delivered ones, pct 1 dp.  The seed
       is re-drawn until the naive answers (raw spellings; open deliveries
       counted as on time) name another supplier or another percentage.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
NAMES = ["Nordic Freight", "Atlas Supply", "Blue River Parts", "Kestrel Components", "Orion Metals", "Sunline Packaging", "Delta Fasteners"]


def answer(d, col):
    x = d[d.delivered_date != ""]
    late = pd.to_datetime(x.delivered_date) > pd.to_datetime(x.promised_date)
    s = (100 * late.groupby(x[col]).mean()).round(1)
    return s.idxmax(), float(s.max())


for attempt in range(50):
    rng = dsgen.np_rng(args.seed, attempt)
    sup = list(rng.choice(NAMES, size=int(rng.integers(4, 7)), replace=False))
    plate = {s: rng.uniform(0.08, 0.35) for s in sup}
    n = int(rng.integers(300, 500))
    s_col = dsgen.choice(rng, sup, n)
    prom = dsgen.fake_dates(rng, n, "2024-01-01", "2024-11-30")
    late = np.array([rng.random() < plate[s] for s in s_col])
    delta = np.where(late, rng.integers(1, 10, n), -rng.integers(0, 4, n))
    deliv = (prom + pd.to_timedelta(delta, unit="D")).dt.strftime("%Y-%m-%d")
    open_ = rng.random(n) < 0.07
    deliv = np.where(open_, "", deliv)
    d = pd.DataFrame({"delivery_id": dsgen.make_ids("D", n, rng, width=6), "supplier": s_col,
                      "promised_date": prom.dt.strftime("%Y-%m-%d"), "delivered_date": deliv})
    raw = d.copy()
    variants = {s: [s.lower(), s.upper(), s.replace(" ", "  "), " " + s, s + " "] for s in sup}
    raw["supplier"], _ = dsgen.mislabel_categories(raw["supplier"], 0.3, rng, variants)
    good = answer(d, "supplier")
    naive = answer(raw, "supplier")
    x = d.copy()
    x["delivered_date"] = np.where(x.delivered_date == "", x.promised_date, x.delivered_date)
    opentime = answer(x, "supplier")
    s_sorted = (100 * (pd.to_datetime(d[d.delivered_date != ""].delivered_date) > pd.to_datetime(d[d.delivered_date != ""].promised_date))
                .groupby(d[d.delivered_date != ""].supplier).mean()).sort_values()
    gap = s_sorted.iloc[-1] - s_sorted.iloc[-2]
    if naive != good and abs(opentime[1] - good[1]) > 0.1 and gap > 0.3:
        break
else:
    raise SystemExit("no seed variant found")
truth = {"answer": {"columns": ["supplier", "late_pct"], "rows": [[good[0], good[1]]]},
         "naive": list(naive), "attempt": attempt}
dsgen.write_outputs(args.out, {"/home/user/deliveries.csv": dsgen.df_to_csv_bytes(raw)}, truth)
