"""p-ex-paired-bp: paired t-test of systolic blood pressure before/after a
treatment, from two files that must be matched on patient_id.

VM:    /home/user/bp_before.csv  patient_id, systolic_mmHg (all enrolled)
       /home/user/bp_after.csv   patient_id, systolic_mmHg (dropouts
       missing, another row order, ids with stray spaces/lower case)
Truth: "test": ds_table one row {n, mean_diff (after - before), t, p_value}
       from scipy.stats.ttest_rel on the matched patients.
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
n = int(rng.integers(70, 110))
ids = dsgen.make_ids("pt", n, rng, width=4)
before = np.round(rng.normal(148, 14, n), 1)
effect = rng.uniform(-6, -1.5)
after = np.round(before + effect + rng.normal(0, 9, n), 1)
keep = np.sort(rng.choice(n, size=n - int(rng.integers(6, 15)), replace=False))
b = pd.DataFrame({"patient_id": ids, "systolic_mmHg": before})
a = pd.DataFrame({"patient_id": np.array(ids)[keep], "systolic_mmHg": after[keep]})
a = dsgen.shuffle(a, rng)
aid = a.patient_id.str.upper()
aid, _ = dsgen.add_whitespace(aid, 0.1, rng, kinds=("lead", "trail"))
a["patient_id"] = aid
r = stats.ttest_rel(after[keep], before[keep])
res = pd.DataFrame([{"n": len(keep), "mean_diff": round(float(np.mean(after[keep] - before[keep])), 3),
                     "t": round(float(r.statistic), 3), "p_value": float(r.pvalue)}])
dsgen.write_outputs(args.out, {"/home/user/bp_before.csv": b, "/home/user/bp_after.csv": a}, {"test": dsgen.table_truth(res)})
