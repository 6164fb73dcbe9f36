"""wx-calc-population-density: a city workbook whose population column is
text with thousands separators and string-encoded missing values; the agent
adds a numeric density column in LibreOffice Calc.

VM:    /home/user/cities.xlsx  sheet "Cities": city_id, city, population
       (text such as "1,284,550"; missing as "N/A", "-" or an empty cell),
       area_km2 (number).  60 data rows (A2:D61).
       Also the Calc readiness probe and the task's LibreOffice profile.
Truth: "density": ds_table {city_id, density}: population / area_km2 rounded
       to 1 decimal, empty where the population is missing.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen, dsgen_gui  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args(extra={"rows": 60})
rng = dsgen.np_rng(args.seed)
n = args.rows
a = ["Al", "Bel", "Cor", "Dun", "Es", "Fal", "Gor", "Hal", "Ist", "Kel", "Lor", "Mar", "Nor", "Os", "Pra", "Ros", "Sel", "Tor", "Val", "Wes"]
b = ["burg", "ford", "mont", "wick", "ton", "vale", "haven", "stad", "port", "field", "more", "by"]
pool = [x + y for x in a for y in b]
names = [pool[k] for k in rng.choice(len(pool), size=n, replace=False)]
countries = dsgen.choice(rng, ["Portugal", "Spain", "France", "Germany", "Poland", "Norway"], n)
pop = np.round(np.exp(rng.uniform(np.log(4000), np.log(3_500_000), n))).astype(int)
area = np.round(rng.uniform(8, 900, n), 1)
txt, dens = [], []
for i in range(n):
    if rng.random() < 0.12:
        txt.append(["N/A", "-", None][int(rng.integers(3))])
        dens.append(None)
    else:
        txt.append(f"{pop[i]:,}")
        dens.append(round(float(pop[i]) / float(area[i]), 1))
ids = dsgen.make_ids("C", n, rng, width=4)
df = pd.DataFrame({"city_id": ids, "city": names, "country": countries,
                   "population": pd.Series(txt, dtype=object), "area_km2": area})
truth = {"density": {"columns": ["city_id", "density"], "rows": [[i, d] for i, d in zip(ids, dens)]},
         "rows": n}
dsgen.write_outputs(args.out, {"/home/user/cities.xlsx": dsgen_gui.xlsx_bytes({"Cities": df}),
                               **dsgen_gui.calc_vm_files("wx-calc-population-density")}, truth)
