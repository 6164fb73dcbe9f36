"""mx-chr-catalog-margin: catalog.html (a product catalogue rendered by
JavaScript from an encoded payload: sku, product, category, status
Active/Discontinued, unit cost "EUR 12.50") shown in Chromium, and
sales_2024.csv (date, sku, qty with returns as negative qty, unit_price)
-> category_margin.xlsx, sheet Margin: category, revenue, cost, margin_pct
over active products, returns netted.

truth: margin = {category, revenue, cost, margin_pct} sorted by margin_pct desc.
"""
import base64, json, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_gui

CATS = ["Audio", "Cables", "Cameras", "Gaming", "Lighting", "Networking", "Storage", "Wearables"]
args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
cats = [CATS[i] for i in sorted(rng.choice(len(CATS), size=5, replace=False))]
N = 30
sku = [f"P{x}" for x in rng.choice(np.arange(200, 999), size=N, replace=False)]
cat = dsgen.choice(rng, cats, N)
for i, c in enumerate(cats):
    cat[i] = c
cost = np.round(rng.uniform(3, 150, size=N), 2)
markup = dict(zip(cats, rng.uniform(1.15, 1.9, size=5)))
price = np.round(cost * np.array([markup[c] for c in cat]) * rng.uniform(0.9, 1.1, size=N), 2)
active = rng.random(N) > 0.25
active[:5] = True
status = np.where(active, "Active", "Discontinued")
prod = [f"{c[:-1] if c.endswith('s') else c} item {s[1:]}" for c, s in zip(cat, sku)]
M = 700
idx = rng.integers(0, N, size=M)
qty = rng.integers(1, 6, size=M)
ret = rng.random(M) < 0.1
qty = np.where(ret, -rng.integers(1, 3, size=M), qty)
dates = pd.to_datetime("2024-01-01") + pd.to_timedelta(rng.integers(0, 366, size=M), unit="D")
sales = pd.DataFrame({"date": dates.strftime("%Y-%m-%d"), "sku": np.array(sku)[idx], "qty": qty, "unit_price": price[idx]})
sales = sales.sort_values("date", kind="stable").reset_index(drop=True)
d = sales.copy()
d["category"] = d.sku.map(dict(zip(sku, cat)))
d["active"] = d.sku.map(dict(zip(sku, active)))
d["uc"] = d.sku.map(dict(zip(sku, cost)))
d = d[d.active]
d["revenue"] = d.qty * d.unit_price
d["cost"] = d.qty * d.uc
g = d.groupby("category")[["revenue", "cost"]].sum().reset_index()
g["margin_pct"] = (100 * (g.revenue - g.cost) / g.revenue).round(1)
g["revenue"] = g.revenue.round(2); g["cost"] = g.cost.round(2)
g = g.sort_values("margin_pct", ascending=False, kind="stable")
rows = [[s, p, c, st, f"EUR {v:,.2f}"] for s, p, c, st, v in zip(sku, prod, cat, status, cost)]
payload = base64.b64encode(json.dumps(rows).encode()).decode()
body = ("<h1>Product catalogue</h1>\n<p class=\"note\">Unit cost is the purchase cost per unit in euros. Discontinued products are "
        "no longer part of the range.</p>\n<table class=\"data\"><thead><tr><th>SKU</th><th>Product</th><th>Category</th><th>Status</th>"
        "<th>Unit cost</th></tr></thead><tbody id=\"t\"></tbody></table>\n<p class=\"note\">End of catalogue.</p>\n"
        f"<script>const d=JSON.parse(atob('{payload}'));const tb=document.getElementById('t');"
        "for(const r of d){const tr=document.createElement('tr');for(const x of r){const td=document.createElement('td');"
        "td.textContent=x;tr.appendChild(td);}tb.appendChild(tr);}</script>")
truth = {"margin": dsgen.table_truth(g[["category", "revenue", "cost", "margin_pct"]])}
dsgen.write_outputs(args.out, {"/home/user/catalog.html": dsgen_gui.html_page("Product catalogue", body),
                               "/home/user/sales_2024.csv": sales}, truth)
