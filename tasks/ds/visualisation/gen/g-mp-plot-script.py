"""g-mp-plot-script: scores.csv (student, group, score; some scores blank) and
a plotting script plot_scores.py (uploaded as .templates/plot_scores.py and
copied into place by the setup, so that the re-run getter, which uploads vm/
again, does not overwrite the agent's edited script) that draws the wrong chart (a line of the
raw scores, wrong labels) -> fix the script in Mousepad so it saves a bar
chart of the mean score per group, run it.

truth: chart = {kind bar, title, xlabel, ylabel, labels (groups A..), values}.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen

args = dsgen.parse_args(extra={"rows": 80})
rng = dsgen.np_rng(args.seed)
k = int(rng.integers(4, 7))
groups = [chr(ord("A") + i) for i in range(k)]
n = args.rows
g = dsgen.choice(rng, groups, n)
base = {x: rng.uniform(55, 85) for x in groups}
score = np.round(np.clip([base[x] + rng.normal(0, 9) for x in g], 0, 100), 1)
df = pd.DataFrame({"student": dsgen.make_ids("st", n, rng, width=4), "group": g, "score": score})
df, _ = dsgen.inject_missing(df, ["score"], 0.06, rng)
means = df.groupby("group").score.mean().reindex(groups)
script = '''import matplotlib
matplotlib.use("Agg")
import pandas as pd
import matplotlib.pyplot as plt

df = pd.read_csv("/home/user/scores.csv")
plt.plot(df["score"])
plt.title("Scores")
plt.savefig("/home/user/scores.svg")
'''
truth = {"chart": {"kind": "bar", "title": "Mean score by group", "xlabel": "Group", "ylabel": "Mean score",
                   "labels": groups, "values": [round(float(v), 4) for v in means]}}
dsgen.write_outputs(args.out, {"/home/user/scores.csv": df, "/home/user/.templates/plot_scores.py": script}, truth)
