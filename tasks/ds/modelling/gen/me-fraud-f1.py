"""me-fraud-f1: flag fraudulent card transactions in heavily imbalanced data
(~3-5% fraud), scored by F1 on the fraud class.

VM:    /home/user/tx_train.csv  tx_id, amount_eur, hour, merchant_category,
       distance_from_home_km, n_tx_last_24h, card_present (0/1),
       foreign (0/1), is_fraud (0/1)
       /home/user/tx_test.csv   the same without is_fraud.
       Synthesised from a logistic model with a seeded, strongly negative
       intercept.
Truth: "predictions": ds_predictions, f1 (positive label 1), threshold =
       0.85 * bayes_f1, where bayes_f1 is the best F1 reachable on the test
       set by thresholding the true fraud probabilities.  A constant 0 gets
       F1 = 0; a plain logistic regression with the default 0.5 cut-off
       falls below the threshold on most seeds (recorded as plain_f1).
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.metrics import f1_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

args = dsgen.parse_args(extra={"train": 3000, "test": 1500})
rng = dsgen.np_rng(args.seed)
n = args.train + args.test
amount = np.round(np.exp(rng.normal(3.5, 1.0, n)), 2)
hour = rng.integers(0, 24, n)
cats = ["grocery", "fuel", "electronics", "travel", "restaurant", "online"]
mc = np.array(dsgen.choice(rng, cats, n, p=[0.3, 0.15, 0.1, 0.1, 0.15, 0.2]))
dist = np.round(rng.gamma(1.2, 8, n), 1)
ntx = rng.poisson(2.0, n)
present = (rng.random(n) < 0.7).astype(int)
foreign = (rng.random(n) < 0.08).astype(int)
ce = dict(zip(cats, [0.0, 0.0, rng.uniform(0.8, 1.5), rng.uniform(0.3, 1.0), 0.0, rng.uniform(0.6, 1.2)]))
night = ((hour <= 4) | (hour >= 23)).astype(float)
logit = (rng.uniform(-7.2, -6.8) + 2.5 * (1.1 * (np.log(amount) - 3.5) + rng.uniform(0.8, 1.4) * night + 0.05 * (dist - 10)
                                          + 0.4 * (ntx - 2) - 1.2 * present + 1.3 * foreign + np.vectorize(ce.get)(mc)))
p = 1 / (1 + np.exp(-logit))
y = (rng.random(n) < p).astype(int)
d = pd.DataFrame({"tx_id": dsgen.make_ids("TX", n, rng, width=7), "amount_eur": amount, "hour": hour, "merchant_category": mc,
                  "distance_from_home_km": dist, "n_tx_last_24h": ntx, "card_present": present, "foreign": foreign, "is_fraud": y, "p": p})
d = dsgen.shuffle(d, rng)
test, train = d.iloc[:args.test].reset_index(drop=True), d.iloc[args.test:].reset_index(drop=True)
order = np.argsort(-test.p.to_numpy())
yt = test.is_fraud.to_numpy()[order]
tp = np.cumsum(yt)
bayes = float(np.max(2 * tp / (np.arange(1, len(yt) + 1) + yt.sum())))
X = pd.get_dummies(train.drop(columns=["tx_id", "is_fraud", "p"]), columns=["merchant_category"]).astype(float)
Xt = pd.get_dummies(test.drop(columns=["tx_id", "is_fraud", "p"]), columns=["merchant_category"]).astype(float).reindex(columns=X.columns, fill_value=0)
plain = float(f1_score(test.is_fraud, make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(X, train.is_fraud).predict(Xt)))
cols = [c for c in d.columns if c != "p"]
dsgen.write_outputs(args.out, {"/home/user/tx_train.csv": train[cols], "/home/user/tx_test.csv": test[cols].drop(columns=["is_fraud"])},
                    {"predictions": dsgen.predictions_truth(test.tx_id, test.is_fraud, "tx_id", "is_fraud", "f1", 0.85 * bayes,
                                                            bayes_f1=bayes, plain_f1=plain, fraud_rate=float(train.is_fraud.mean()))},
                    {"labels.csv": test[["tx_id", "is_fraud"]]})
