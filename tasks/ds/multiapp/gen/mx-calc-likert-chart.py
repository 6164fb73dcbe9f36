"""mx-calc-likert-chart: survey.xlsx (sheet Responses: response_id, team,
answer as Likert text in inconsistent case/spaces, some blank; empty score)
open in Calc -> fill score 1-5 in Calc, save; then python: team_scores.csv
(team, responses, mean_score) and a bar chart.

truth: scores = {response_id, score}; teams = {team, responses, mean_score}; chart.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_gui

TASK = "mx-calc-likert-chart"
SCALE = ["strongly disagree", "disagree", "neutral", "agree", "strongly agree"]
TEAMS = ["Billing", "Platform", "Mobile", "Data", "Support", "Design", "Security", "Growth"]
args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
teams = [TEAMS[i] for i in sorted(rng.choice(len(TEAMS), size=5, replace=False))]
N = 120
team = dsgen.choice(rng, teams, N)
mood = dict(zip(teams, rng.uniform(-1, 1.2, size=5)))
sc = np.clip(np.round(3 + np.array([mood[t] for t in team]) + rng.normal(0, 1.1, size=N)), 1, 5).astype(int)
ans = []
for s in sc:
    a = SCALE[s - 1]
    r = rng.random()
    a = a.title() if r < 0.45 else (a.upper() if r < 0.6 else a)
    if rng.random() < 0.2:
        a = (" " + a) if rng.random() < 0.5 else (a + "  ")
    ans.append(a)
blank = rng.random(N) < 0.08
ans = [None if b else a for a, b in zip(ans, blank)]
ids = [f"R{1000 + i}" for i in range(N)]
df = pd.DataFrame({"response_id": ids, "team": team, "answer": ans, "score": [None] * N})
score = pd.Series(np.where(blank, np.nan, sc), dtype=float)
s = pd.DataFrame({"team": team, "score": score}).dropna()
g = s.groupby("team").agg(responses=("score", "size"), mean_score=("score", "mean")).reset_index()
g["mean_score"] = g.mean_score.round(2)
g = g.sort_values(["mean_score", "team"], ascending=[False, True], kind="stable")
truth = {"scores": {"columns": ["response_id", "score"], "rows": [[i, None if b else int(v)] for i, v, b in zip(ids, sc, blank)]},
         "teams": dsgen.table_truth(g),
         "chart": {"kind": "bar", "title": "Mean satisfaction by team", "xlabel": "Team", "ylabel": "Mean score",
                   "labels": list(g.team), "values": [float(v) for v in g.mean_score]}}
dsgen.write_outputs(args.out, {"/home/user/survey.xlsx": dsgen_gui.xlsx_bytes({"Responses": df}),
                               **dsgen_gui.calc_vm_files(TASK)}, truth)
