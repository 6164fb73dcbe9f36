"""mx-chr-sqlite-attainment: targets.html (a page whose table is rendered by
JavaScript from an encoded payload: region, Q2 target written as "EUR 840 k"
or "EUR 1.25 M") shown in Chromium, and sales.db (stores: store_id, region;
sales: sale_id, store_id, sale_date, amount, status paid/void in mixed case)
-> attainment.csv (region, revenue, target, attainment_pct) + a bar chart.

truth: attainment = {region, revenue, target, attainment_pct} sorted by attainment desc; chart.
"""
import base64, json, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_gui

REGIONS = ["North", "South", "East", "West", "Central", "Coastal", "Alpine", "Metro"]
args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
k = int(rng.integers(5, 8))
regs = [REGIONS[i] for i in sorted(rng.choice(len(REGIONS), size=k, replace=False))]
stores = pd.DataFrame({"store_id": np.arange(101, 101 + 3 * k), "region": [r for r in regs for _ in range(3)]})
M = 3000
sid = rng.choice(stores.store_id.values, size=M)
dates = pd.to_datetime("2024-01-01") + pd.to_timedelta(rng.integers(0, 274, size=M), unit="D")
amount = np.round(rng.lognormal(8.6, 0.6, size=M), 2)
paid = rng.random(M) < 0.85
status = np.where(paid, "paid", "void").astype(object)
for i in rng.choice(M, size=M // 5, replace=False):
    status[i] = status[i].upper() if rng.random() < 0.5 else status[i].capitalize()
sales = pd.DataFrame({"sale_id": np.arange(1, M + 1), "store_id": sid, "sale_date": dates.strftime("%Y-%m-%d"),
                      "amount": amount, "status": status})
reg_of = dict(zip(stores.store_id, stores.region))
q2 = paid & (sales.sale_date >= "2024-04-01").values & (sales.sale_date <= "2024-06-30").values
rev = pd.Series(amount[q2]).groupby(pd.Series(sid[q2]).map(reg_of).values).sum()
targets, shown = [], []
for r in regs:
    t = rev[r] * rng.uniform(0.7, 1.3)
    if t >= 1e6 or rng.random() < 0.4:
        v = round(t / 1e6, 2); targets.append(v * 1e6); shown.append(f"EUR {v:.2f} M")
    else:
        v = int(round(t / 1e3)); targets.append(v * 1e3); shown.append(f"EUR {v} k")
payload = base64.b64encode(json.dumps([[r, s] for r, s in zip(regs, shown)]).encode()).decode()
body = ("<h1>Regional sales targets</h1>\n<p class=\"note\">Second quarter 2024 (April to June). Targets are paid revenue in euros; "
        "k = thousand, M = million.</p>\n<table class=\"data\"><thead><tr><th>Region</th><th>Q2 target</th></tr></thead>"
        "<tbody id=\"t\"></tbody></table>\n<p class=\"note\">End of targets.</p>\n"
        f"<script>const d=JSON.parse(atob('{payload}'));const tb=document.getElementById('t');"
        "for(const [r,v] of d){const tr=document.createElement('tr');for(const x of [r,v]){const td=document.createElement('td');"
        "td.textContent=x;tr.appendChild(td);}tb.appendChild(tr);}</script>")
df = pd.DataFrame({"region": regs, "revenue": [round(float(rev[r]), 2) for r in regs], "target": targets})
df["attainment_pct"] = (100 * df.revenue / df.target).round(1)
df = df.sort_values("attainment_pct", ascending=False, kind="stable")
truth = {"attainment": dsgen.table_truth(df),
         "chart": {"kind": "bar", "title": "Q2 target attainment", "xlabel": "Region", "ylabel": "Attainment (%)",
                   "labels": list(df.region), "values": [float(v) for v in df.attainment_pct]}}
dsgen.write_outputs(args.out, {"/home/user/targets.html": dsgen_gui.html_page("Regional sales targets", body),
                               "/home/user/sales.db": {"stores": stores, "sales": sales}}, truth)
