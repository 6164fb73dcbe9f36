"""Seeded orders for the example task sqlite-export-csv:
/home/user/shop.db with a table orders(id, name, qty), different names and
quantities per seed. The expected export (name,total sorted by name, with a
header) is host/totals_gold.csv."""

import argparse
import json
import random
import sqlite3
from pathlib import Path

FRUIT = ["apple", "banana", "cherry", "date", "fig", "grape", "kiwi", "lemon", "mango", "pear", "plum"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    names = rng.sample(FRUIT, rng.randint(3, 6))
    rows = [(i + 1, rng.choice(names), rng.randint(1, 20)) for i in range(rng.randint(8, 30))]
    db = a.out / "vm/home/user/shop.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE orders(id INTEGER PRIMARY KEY, name TEXT, qty INTEGER)")
    con.executemany("INSERT INTO orders VALUES (?, ?, ?)", rows)
    con.commit()
    con.close()
    totals = {}
    for _, n, q in rows:
        totals[n] = totals.get(n, 0) + q
    gold = "name,total\n" + "".join(f"{n},{totals[n]}\n" for n in sorted(totals))
    (a.out / "host").mkdir(parents=True, exist_ok=True)
    (a.out / "host/totals_gold.csv").write_text(gold)
    (a.out / "truth.json").write_text(json.dumps({"totals": totals}, indent=1))


if __name__ == "__main__":
    main()
