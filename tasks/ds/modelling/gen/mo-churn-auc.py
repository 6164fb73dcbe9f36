"""mo-churn-auc: score customers' churn risk from dirty tabular data.

VM:    /home/user/churn_train.csv  customer_id,tenure_months,monthly_charge,
       support_calls,age,plan,contract,churned (0/1)
       /home/user/churn_test.csv   the same without churned
       Synthesized from a logistic model (seeded coefficients).  Defects in
       both files: ~12% of monthly_charge recorded in cents (x100); plan and
       contract labels in inconsistent case / with stray spaces; ~5% of
       tenure_months and support_calls missing.
Truth: "predictions": ds_predictions shape, metric auc on a churn probability,
       threshold = 0.5 + 0.88 * (bayes_auc - 0.5), where bayes_auc is the AUC
       of the true churn probabilities on the test set.  Reference AUCs of a
       cleaned logistic model and of a constant are recorded.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

args = dsgen.parse_args(extra={"train": 1500, "test": 600})
rng = dsgen.np_rng(args.seed)
n = args.train + args.test
tenure = rng.integers(1, 73, n)
charge = np.round(rng.uniform(20, 120, n), 2)
calls = rng.poisson(rng.uniform(0.8, 2.0), n)
age = rng.integers(18, 80, n)
plan = np.array(dsgen.choice(rng, ["Basic", "Plus", "Pro"], n, p=[0.5, 0.3, 0.2]))
contract = np.array(dsgen.choice(rng, ["Monthly", "Annual", "Biennial"], n, p=[0.5, 0.3, 0.2]))
b = {"tenure": -rng.uniform(0.02, 0.05), "charge": rng.uniform(0.01, 0.03), "calls": rng.uniform(0.25, 0.5),
     "age": rng.uniform(-0.01, 0.01)}
ce = {"Monthly": rng.uniform(0.6, 1.2), "Annual": 0.0, "Biennial": -rng.uniform(0.6, 1.2)}
pe = {"Basic": 0.0, "Plus": rng.uniform(-0.4, 0.4), "Pro": rng.uniform(-0.6, 0.2)}
logit = (-0.6 + b["tenure"] * (tenure - 36) + b["charge"] * (charge - 70) + b["calls"] * (calls - 1.4)
         + b["age"] * (age - 48) + np.vectorize(ce.get)(contract) + np.vectorize(pe.get)(plan))
p = 1 / (1 + np.exp(-logit))
y = (rng.random(n) < p).astype(int)
d = pd.DataFrame({"customer_id": dsgen.make_ids("C", n, rng, width=6), "tenure_months": tenure, "monthly_charge": charge,
                  "support_calls": calls, "age": age, "plan": plan, "contract": contract, "churned": y})
d = d.iloc[rng.permutation(n)].reset_index(drop=True)
d["p_true"] = 1 / (1 + np.exp(-(-0.6 + b["tenure"] * (d.tenure_months - 36) + b["charge"] * (d.monthly_charge - 70)
                                 + b["calls"] * (d.support_calls - 1.4) + b["age"] * (d.age - 48)
                                 + d.contract.map(ce) + d.plan.map(pe))))
d, cents = dsgen.unit_mixup(d, "monthly_charge", 0.12, rng, factor=100, decimals=0)
d["plan"], _ = dsgen.mislabel_categories(d["plan"], 0.2, rng, variants={k: [k.lower(), k.upper(), " " + k, k + " "] for k in ["Basic", "Plus", "Pro"]})
d["contract"], _ = dsgen.mislabel_categories(d["contract"], 0.2, rng, variants={k: [k.lower(), k.upper(), k + "  "] for k in ["Monthly", "Annual", "Biennial"]})
d, _ = dsgen.inject_missing(d, ["tenure_months", "support_calls"], 0.05, rng)
test, train = d.iloc[:args.test].reset_index(drop=True), d.iloc[args.test:].reset_index(drop=True)
bayes = float(roc_auc_score(test.churned, test.p_true))
thr = 0.5 + 0.88 * (bayes - 0.5)
cols = ["customer_id", "tenure_months", "monthly_charge", "support_calls", "age", "plan", "contract"]
dsgen.write_outputs(args.out, {"/home/user/churn_train.csv": train[cols + ["churned"]], "/home/user/churn_test.csv": test[cols]},
                    {"predictions": dsgen.predictions_truth(test.customer_id, test.churned, "customer_id", "churned", "auc", thr,
                                                            bayes_auc=bayes, churn_rate=float(train.churned.mean()))},
                    {"labels.csv": test[["customer_id", "churned"]]})
