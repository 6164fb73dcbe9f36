#!/usr/bin/env python3
"""Prints the reference values that stats/tests/against_scipy.rs holds,
computed independently with scipy (Debian's python3-scipy, 1.10):

    /usr/bin/python3 stats/tests/reference.py

McNemar: scipy.stats.binomtest on the discordant pairs. Permutation:
scipy.stats.permutation_test, permutation_type="samples" (sign flips),
every assignment enumerated. pass@k: math.comb. MDD: scipy.stats.norm.
"""
import math

import numpy as np
from scipy import stats

print("# mcnemar (a_only, b_only) -> p")
for a_only, b_only in [(6, 0), (5, 1), (7, 3), (10, 10), (0, 1), (12, 3), (40, 25)]:
    n = a_only + b_only
    p = stats.binomtest(min(a_only, b_only), n, 0.5, alternative="two-sided").pvalue
    print(f"({a_only}, {b_only}, {p!r}),")

CASES = {
    "small": ([1.0, 0.8, 1.0, 0.0, 1.0, 0.5, 1.0], [0.0, 0.8, 0.5, 0.0, 1.0, 0.25, 0.0]),
    "mixed": ([0.9, 0.1, 0.7, 0.3, 1.0, 0.0, 0.6, 0.4, 0.8, 0.2, 0.5, 0.55],
              [0.8, 0.2, 0.75, 0.1, 0.9, 0.05, 0.65, 0.3, 0.7, 0.25, 0.45, 0.5]),
}
print("# permutation name -> p")
for name, (a, b) in CASES.items():
    r = stats.permutation_test(
        (np.array(a), np.array(b)),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=np.inf,
        alternative="two-sided",
    )
    print(f"{name}: {r.pvalue!r}")


def pass_at_k(n, c, k):
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


print("# pass@k (n, c, k) -> value")
for n, c, k in [(10, 3, 1), (10, 3, 5), (10, 0, 3), (5, 5, 2), (200, 13, 10), (20, 19, 2)]:
    print(f"({n}, {c}, {k}, {pass_at_k(n, c, k)!r}),")

print("# mdd (sd, n) -> value at alpha 0.05, power 0.8")
for sd, n in [(0.5, 100), (0.3, 37), (1.0, 6)]:
    v = (stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * sd / math.sqrt(n)
    print(f"({sd}, {n}, {v!r}),")

print("# bootstrap percentile 95 % of the mean, 100 000 resamples")
xs = np.array([((i * 7) % 11) / 10 for i in range(20)])
r = stats.bootstrap((xs,), np.mean, n_resamples=100_000, method="percentile",
                    confidence_level=0.95, random_state=np.random.default_rng(1))
print(f"mean {xs.mean()!r} lo {r.confidence_interval.low!r} hi {r.confidence_interval.high!r}")
