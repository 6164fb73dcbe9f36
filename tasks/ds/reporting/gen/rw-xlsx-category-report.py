"""rw-xlsx-category-report: a three-sheet workbook -> an xlsx category report.

VM:    /home/user/sales.xlsx  sheets lines(order_id,sku,qty,unit_price,currency),
       products(sku,category), fx(currency,eur_per_unit).  Prices are in EUR,
       USD or GBP; some sku values carry stray spaces / lower case in lines.
Truth: "report": category,units,revenue_eur,share_pct sorted by revenue desc
       (revenue = qty*unit_price*eur_per_unit, 2 dp; share of total, 1 dp).
       "no_fx": the same without the currency conversion.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
cats = ["Garden", "Kitchen", "Toys", "Office", "Sports", "Books"]
cats = list(rng.choice(cats, size=int(rng.integers(4, 7)), replace=False))
nsku = int(rng.integers(18, 30))
skus = [f"SK-{int(k):04d}" for k in sorted(rng.choice(9999, nsku, replace=False) + 1)]
prod = pd.DataFrame({"sku": skus, "category": dsgen.choice(rng, cats, nsku)})
base_price = {s: round(float(rng.uniform(3, 120)), 2) for s in skus}
fx = pd.DataFrame({"currency": ["EUR", "USD", "GBP"],
                   "eur_per_unit": [1.0, round(float(rng.uniform(0.86, 0.95)), 4), round(float(rng.uniform(1.12, 1.2)), 4)]})
rate = dict(zip(fx.currency, fx.eur_per_unit))
n = int(rng.integers(250, 400))
sku = dsgen.choice(rng, skus, n)
cur = dsgen.choice(rng, ["EUR", "USD", "GBP"], n, p=[0.5, 0.3, 0.2])
price = [round(base_price[s] / rate[c] * float(rng.uniform(0.95, 1.05)), 2) for s, c in zip(sku, cur)]
lines = pd.DataFrame({"order_id": [f"W{int(x):05d}" for x in rng.integers(1, 99999, n)], "sku": sku,
                      "qty": rng.integers(1, 9, n), "unit_price": price, "currency": cur})
raw = lines.copy()
raw["sku"], _ = dsgen.add_whitespace(raw["sku"], 0.1, rng, kinds=("lead", "trail"))
low = rng.random(n) < 0.05
raw.loc[low, "sku"] = raw.loc[low, "sku"].str.lower()


def report(conv):
    d = lines.merge(prod, on="sku")
    d["rev"] = d.qty * d.unit_price * (d.currency.map(rate) if conv else 1.0)
    t = d.groupby("category").agg(units=("qty", "sum"), revenue_eur=("rev", "sum")).reset_index()
    t["share_pct"] = (100 * t.revenue_eur / t.revenue_eur.sum()).round(1)
    t["revenue_eur"] = t.revenue_eur.round(2)
    return t.sort_values("revenue_eur", ascending=False).reset_index(drop=True)


xl = dsgen.df_to_xlsx_bytes({"lines": raw, "products": prod, "fx": fx})
dsgen.write_outputs(args.out, {"/home/user/sales.xlsx": xl},
                    {"report": dsgen.table_truth(report(True)), "no_fx": dsgen.table_truth(report(False))})
