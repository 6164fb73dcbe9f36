"""p-wr-json-order-lines: nested JSON order records flattened to one CSV row
per order line.

VM:    /home/user/orders.json  a list of orders {order_id, placed_at,
       customer: {id, name, address: {city, country}}, items: [{sku, qty,
       unit_price}], coupon (optional: absent, null or a code)}.  Some
       addresses lack a city; qty is sometimes a string ("3").
Truth: "lines": ds_table {order_id, customer_id, country, city, sku, qty,
       unit_price, line_total, coupon} (coupon and missing city blank).
"""
import json
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args(extra={"orders": 150})
rng = dsgen.np_rng(args.seed)
cities = {"PT": ["Lisbon", "Porto"], "ES": ["Madrid"], "FR": ["Lyon"], "DE": ["Berlin", "Hamburg"], "AT": ["Vienna"], "NL": ["Rotterdam"]}
skus = {f"SKU-{i:03d}": round(float(rng.uniform(2, 80)), 2) for i in rng.choice(900, 25, replace=False) + 100}
custs = []
for cid, name in zip(dsgen.make_ids("CU", 40, rng, width=4), dsgen.fake_names(rng, 40)):
    cc = list(cities)[int(rng.integers(len(cities)))]
    addr = {"country": cc}
    if rng.random() > 0.15:
        addr["city"] = cities[cc][int(rng.integers(len(cities[cc])))]
    custs.append({"id": cid, "name": name, "address": addr})
orders, lines = [], []
dates = dsgen.fake_dates(rng, args.orders, "2024-01-01", "2024-12-31")
for oid, day in zip(dsgen.make_ids("O", args.orders, rng, width=6), dates):
    c = custs[int(rng.integers(len(custs)))]
    items = []
    for sku in rng.choice(list(skus), size=int(rng.integers(1, 5)), replace=False):
        q = int(rng.integers(1, 6))
        items.append({"sku": str(sku), "qty": str(q) if rng.random() < 0.15 else q, "unit_price": skus[sku]})
        lines.append({"order_id": oid, "customer_id": c["id"], "country": c["address"]["country"], "city": c["address"].get("city"),
                      "sku": str(sku), "qty": q, "unit_price": skus[sku], "line_total": round(q * skus[sku], 2)})
    o = {"order_id": oid, "placed_at": f"{day:%Y-%m-%d}T{int(rng.integers(8, 22)):02d}:{int(rng.integers(60)):02d}:00", "customer": c, "items": items}
    u = rng.random()
    code = None
    if u < 0.3:
        code = str(dsgen.choice(rng, ["WELCOME10", "SPRING5", "VIP20"], 1)[0])
        o["coupon"] = code
    elif u < 0.5:
        o["coupon"] = None
    for ln in lines[len(lines) - len(items):]:
        ln["coupon"] = code
    orders.append(o)
dsgen.write_outputs(args.out, {"/home/user/orders.json": json.dumps(orders, indent=1)}, {"lines": dsgen.table_truth(pd.DataFrame(lines))})
