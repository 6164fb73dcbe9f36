"""me-ols-wage-gap: the adjusted gender pay gap from a log-wage regression
with heteroskedasticity-robust (HC3) standard errors (statsmodels).

VM:    /home/user/wages.csv  employee_id, hourly_wage (EUR), years_education,
       experience_years, female (0/1), sector.  Synthesised: log wage =
       a + b_edu*edu + b1*exp + b2*exp^2 + gap*female + sector effect + noise
       whose spread grows with education and is larger for women (so HC3
       and classical SEs differ);
       women and men differ in experience, so the raw gap differs from the
       adjusted one.
Truth: "gap_table" (ds_table term,coef,std_err,p_value, one row) and
       "coef", "se", "p": the female coefficient, its HC3 standard error and
       p-value in OLS np.log(hourly_wage) ~ years_education + experience_years
       + I(experience_years**2) + female + C(sector).  "se_classical",
       "coef_level" (wage not logged), "raw_gap" for the record.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import statsmodels.formula.api as smf  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
n = int(rng.integers(600, 900))
female = (rng.random(n) < 0.48).astype(int)
edu = rng.integers(9, 21, n)
exp_ = np.clip(np.round(rng.gamma(3, 4, n) - 2.5 * female, 0), 0, 45).astype(int)
sectors = ["manufacturing", "retail", "finance", "public", "health"]
sec = np.array(dsgen.choice(rng, sectors, n))
se = dict(zip(sectors, rng.uniform(-0.2, 0.3, len(sectors))))
gap = rng.uniform(-0.14, -0.03)
lw = (1.6 + rng.uniform(0.05, 0.09) * edu + 0.035 * exp_ - 0.0006 * exp_ ** 2 + gap * female + np.vectorize(se.get)(sec)
      + rng.normal(0, 1, n) * (0.1 + 0.025 * (edu - 9)) * (1 + rng.uniform(0.5, 0.9) * female))
d = pd.DataFrame({"employee_id": dsgen.make_ids("E", n, rng, width=5), "hourly_wage": np.round(np.exp(lw), 2), "years_education": edu,
                  "experience_years": exp_, "female": female, "sector": sec})
F = "np.log(hourly_wage) ~ years_education + experience_years + I(experience_years**2) + female + C(sector)"
m = smf.ols(F, data=d).fit(cov_type="HC3")
c = smf.ols(F, data=d).fit()
lvl = smf.ols(F.replace("np.log(hourly_wage)", "hourly_wage"), data=d).fit(cov_type="HC3")
raw = float(np.log(d.hourly_wage[d.female == 1]).mean() - np.log(d.hourly_wage[d.female == 0]).mean())
dsgen.write_outputs(args.out, {"/home/user/wages.csv": d},
                    {"gap_table": {"columns": ["term", "coef", "std_err", "p_value"],
                                   "rows": [["female", float(m.params["female"]), float(m.bse["female"]), float(m.pvalues["female"])]]},
                     "coef": float(m.params["female"]), "se": float(m.bse["female"]), "p": float(m.pvalues["female"]),
                     "se_classical": float(c.bse["female"]), "p_classical": float(c.pvalues["female"]), "coef_level": float(lvl.params["female"]), "raw_gap": raw, "true_gap": gap})
