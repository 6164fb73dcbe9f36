"""Seeded sales data for the example tasks csv-mean-terminal and
matplotlib-bar-chart: /home/user/sales.csv (order_id, region, amount) with
a different number of rows, regions and amounts per seed. truth.json holds
the mean amount and the total per region (regions sorted)."""

import argparse
import csv
import io
import json
import random
from pathlib import Path

REGIONS = ["Central", "East", "North", "South", "West", "Coast", "Hills", "Valley"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    regions = sorted(rng.sample(REGIONS, rng.randint(3, 6)))
    # Each region has its own weight and typical order size, so totals,
    # counts and means per region all differ.
    weight = {r: rng.uniform(0.5, 3.0) for r in regions}
    scale = {r: rng.uniform(20, 400) for r in regions}
    rows = []
    for i in range(rng.randint(40, 120)):
        region = rng.choices(regions, [weight[r] for r in regions])[0]
        amount = round(scale[region] * rng.uniform(0.3, 1.7), 2)
        rows.append((1000 + i, region, amount))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["order_id", "region", "amount"])
    w.writerows(rows)
    target = a.out / "vm/home/user/sales.csv"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(buf.getvalue())
    totals = {r: round(sum(x for _, g, x in rows if g == r), 2) for r in regions}
    truth = {
        "mean": sum(x for _, _, x in rows) / len(rows),
        "chart": {
            "kind": "bar",
            "title": "Total amount by region",
            "labels": regions,
            "values": [totals[r] for r in regions],
        },
        "png_text": {"contains": ["Total amount by region"]},
    }
    (a.out / "truth.json").write_text(json.dumps(truth, indent=1))


if __name__ == "__main__":
    main()
