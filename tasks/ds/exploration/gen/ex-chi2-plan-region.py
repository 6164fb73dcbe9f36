"""ex-chi2-plan-region: chi-square test of independence between region and
subscription plan, after cleaning inconsistent category labels.

VM:    /home/user/survey.csv  columns respondent,region,plan,satisfaction.
       region is one of North/South/East/West but ~15% of the labels are
       written inconsistently (lower/upper case, stray spaces, or the
       abbreviations N./S./E./W.); plan is Basic/Plus/Pro with ~10% in other
       case and/or with spaces.  The plan mix depends on the region by a
       seed-drawn amount (sometimes not at all).
Truth: "crosstab": counts, rows region (sorted), columns Basic,Plus,Pro;
       "chi2", "dof", "p": scipy.stats.chi2_contingency on that table.
       "chi2_raw": the statistic on the uncleaned labels (for the record).
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import stats  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
regions, plans = ["East", "North", "South", "West"], ["Basic", "Plus", "Pro"]
n = int(rng.integers(400, 700))
base = rng.dirichlet([6, 4, 2])
strength = rng.choice([0.0, rng.uniform(0.3, 1.0)])
reg = dsgen.choice(rng, regions, n, p=rng.dirichlet([5] * 4))
probs = {r: (1 - strength) * base + strength * rng.dirichlet([6, 4, 2]) for r in regions}
plan = [plans[int(rng.choice(3, p=probs[r]))] for r in reg]
clean = pd.DataFrame({"region": reg, "plan": plan})
ab = {r: [r[0] + ".", r.lower(), r.upper(), " " + r, r + " ", r[0].lower() + "."] for r in regions}
d = clean.copy()
d["region"], _ = dsgen.mislabel_categories(d["region"], 0.15, rng, variants=ab)
d["plan"], _ = dsgen.mislabel_categories(d["plan"], 0.10, rng, variants={p: [p.lower(), p.upper(), p + " ", " " + p.lower()] for p in plans})
d.insert(0, "respondent", dsgen.make_ids("R", n, rng, width=5))
d["satisfaction"] = rng.integers(1, 6, n)
ct = pd.crosstab(clean.region, clean.plan).reindex(index=regions, columns=plans, fill_value=0)
c = stats.chi2_contingency(ct.values)
raw = stats.chi2_contingency(pd.crosstab(d.region, d.plan).values)
ctdf = ct.reset_index().rename(columns={"index": "region"})
ctdf.columns = ["region"] + plans
dsgen.write_outputs(args.out, {"/home/user/survey.csv": d},
                    {"crosstab": dsgen.table_truth(ctdf), "chi2": float(c[0]), "p": float(c[1]), "dof": int(c[2]),
                     "chi2_raw": float(raw[0]), "strength": float(strength)})
