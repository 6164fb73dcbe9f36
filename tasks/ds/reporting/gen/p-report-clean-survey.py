"""p-report-clean-survey: a cleaned health survey plus its data dictionary.

VM:    /home/user/survey_raw.csv  respondent_id, age, sex, height, weight_kg,
       smoker.  Defects: exact duplicate rows; sex and smoker spelled many
       ways (f, Female, " M", Y, NO...); missing values as blank, "?" or
       "n/a"; heights mostly in cm but some in metres (values below 3).
Truth: "clean": ds_table of survey_clean.csv {respondent_id, age, sex (F/M),
       height_cm (1 dp), weight_kg, smoker (yes/no), bmi (1 dp)};
       "dictionary": {column, type (numeric/text), missing} of that table.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args(extra={"rows": 300})
rng = dsgen.np_rng(args.seed)
n = args.rows
sex = np.array(dsgen.choice(rng, ["F", "M"], n))
h = np.round(np.where(sex == "F", rng.normal(164, 7, n), rng.normal(177, 7, n)), 1)
w = np.round(h - 100 + rng.normal(-3, 11, n), 1)
clean = pd.DataFrame({"respondent_id": dsgen.make_ids("R", n, rng, width=5), "age": rng.integers(18, 86, n),
                      "sex": sex, "height_cm": h, "weight_kg": w,
                      "smoker": dsgen.choice(rng, ["yes", "no"], n, p=[0.25, 0.75])})
# missing values (truth), per column
miss = {}
for c, k in (("age", int(rng.integers(3, 9))), ("height_cm", int(rng.integers(4, 12))), ("weight_kg", int(rng.integers(4, 12))),
             ("smoker", int(rng.integers(2, 8))), ("sex", int(rng.integers(1, 5)))):
    miss[c] = rng.choice(n, size=k, replace=False)
    clean[c] = clean[c].astype(object)
    clean.loc[miss[c], c] = None
raw = clean.copy()
for c, pos in miss.items():
    raw.loc[pos, c] = dsgen.choice(rng, ["", "?", "n/a"], len(pos))
metres = rng.choice(n, size=int(rng.integers(10, 25)), replace=False)
for i in metres:
    if raw.at[i, "height_cm"] not in ("", "?", "n/a"):
        raw.at[i, "height_cm"] = f"{float(raw.at[i, 'height_cm']) / 100:.3f}"
sv = {"F": ["F", "f", "female", "Female", " F"], "M": ["M", "m", "male", "Male", "M "]}
yv = {"yes": ["yes", "Yes", "Y", "y", "YES"], "no": ["no", "No", "N", "n", "NO"]}
raw["sex"] = [dsgen.choice(rng, sv[v], 1)[0] if v in sv else v for v in raw.sex]
raw["smoker"] = [dsgen.choice(rng, yv[v], 1)[0] if v in yv else v for v in raw.smoker]
raw = raw.rename(columns={"height_cm": "height"})
raw, _ = dsgen.inject_duplicates(raw, int(rng.integers(8, 16)), rng)
hc = pd.to_numeric(clean.height_cm)
clean["bmi"] = (pd.to_numeric(clean.weight_kg) / (hc / 100) ** 2).round(1)
dic = pd.DataFrame({"column": list(clean.columns),
                    "type": ["text", "numeric", "text", "numeric", "numeric", "text", "numeric"],
                    "missing": [int(clean[c].isna().sum()) for c in clean.columns]})
dsgen.write_outputs(args.out, {"/home/user/survey_raw.csv": raw}, {"clean": dsgen.table_truth(clean), "dictionary": dsgen.table_truth(dic)})
