"""me-anova-fertilizer: one-way ANOVA of crop yield across fertiliser
treatments, after fixing inconsistent treatment labels and dropping plots
whose yield was not recorded.

VM:    /home/user/field_trial.csv  plot_id, block, fertilizer (3-4 seeded
       treatments, ~20% written in other case / with stray spaces),
       yield_t_ha (~4% empty).
Truth: "F" and "p": scipy.stats.f_oneway over the cleaned treatment groups;
       "F_raw"/"p_raw" (labels not cleaned: more groups) and "H"/"p_kruskal"
       (a rank test instead of ANOVA) for the record.
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
pool = ["Control", "Nitrogen", "Compost", "NPK", "Manure"]
k = int(rng.integers(3, 5))
treat = ["Control"] + list(rng.choice(pool[1:], size=k - 1, replace=False))
eff = {t: (0.0 if t == "Control" else rng.uniform(-0.1, 0.6)) for t in treat}
rows = []
for b in range(1, int(rng.integers(5, 9)) + 1):
    be = rng.normal(0, 0.3)
    for t in treat:
        for _ in range(int(rng.integers(3, 7))):
            rows.append((f"B{b}", t, 5.0 + be + eff[t] + rng.normal(0, rng.uniform(0.5, 0.8))))
d = pd.DataFrame(rows, columns=["block", "fertilizer", "yield_t_ha"])
d["yield_t_ha"] = d.yield_t_ha.round(2)
d = dsgen.shuffle(d, rng)
d.insert(0, "plot_id", dsgen.make_ids("P", len(d), rng, width=4))
clean = d.copy()
d["fertilizer"], _ = dsgen.mislabel_categories(d.fertilizer, 0.2, rng, variants={t: [t.lower(), t.upper(), t + " ", " " + t] for t in treat})
d, miss = dsgen.inject_missing(d, ["yield_t_ha"], 0.04, rng)
ok = d.yield_t_ha.notna()
groups = [d.yield_t_ha[ok & (clean.fertilizer == t)] for t in treat]
f = stats.f_oneway(*groups)
h = stats.kruskal(*groups)
raw = [g.yield_t_ha.to_numpy() for _, g in d[ok].groupby("fertilizer")]
fr = stats.f_oneway(*raw)
dsgen.write_outputs(args.out, {"/home/user/field_trial.csv": d},
                    {"F": float(f.statistic), "p": float(f.pvalue), "F_raw": float(fr.statistic), "p_raw": float(fr.pvalue),
                     "H": float(h.statistic), "p_kruskal": float(h.pvalue), "treatments": treat})
