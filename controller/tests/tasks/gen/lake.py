"""A small seeded data lake for the upload test task lake-count-terminal:
30 to 99 CSV files under /home/user/lake, in 12 folders, plus a few JSON and
text files that are not CSV. truth.json holds the number of CSV files, so
the answer differs from seed to seed. Enough files that the controller
uploads them as one archive."""

import argparse
import json
import random
from pathlib import Path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    lake = a.out / "vm/home/user/lake"
    folders = [f"region_{i:02d}" for i in range(12)]
    n = rng.randint(30, 99)
    for i in range(n):
        d = lake / rng.choice(folders) / f"year_{rng.randint(2019, 2024)}"
        d.mkdir(parents=True, exist_ok=True)
        rows = "\n".join(f"{j},{rng.randint(1, 500)}" for j in range(rng.randint(2, 6)))
        (d / f"sales_{i:03d}.csv").write_text("id,amount\n" + rows + "\n")
    for i in range(rng.randint(3, 8)):
        (lake / f"notes_{i}.json").write_text(json.dumps({"note": i}))
    (lake / "README.txt").write_text("Sales by region and year.\n")
    (a.out / "truth.json").write_text(json.dumps({"csv_files": n}))


if __name__ == "__main__":
    main()
