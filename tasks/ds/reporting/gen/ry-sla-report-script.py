"""ry-sla-report-script: a re-runnable SLA report over a messy ticket export.

VM:    /home/user/tickets.csv  ticket_id,priority,opened_at,closed_at,team
       priority: P1..P3 in mixed case with stray spaces; timestamps as
       'YYYY-MM-DD HH:MM' or day-first 'DD/MM/YYYY HH:MM'; open tickets
       have an empty closed_at; some rows exported twice (exact copies).
       /home/user/sla.json  {"P1": hours, "P2": hours, "P3": hours}
       (the targets change between exports).
Truth: "report": priority,closed_tickets,median_hours,within_sla_pct.
"""
import json
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
n = int(rng.integers(250, 400))
sla = {"P1": int(rng.choice([4, 6, 8])), "P2": int(rng.choice([16, 24, 36])), "P3": int(rng.choice([48, 72, 96]))}
pri = dsgen.choice(rng, ["P1", "P2", "P3"], n, p=[0.2, 0.45, 0.35])
start = pd.Timestamp("2024-01-01") + pd.Timedelta(days=int(rng.integers(0, 200)))
opened = start + pd.to_timedelta(rng.integers(0, 60 * 24 * 28, size=n), unit="m")
scale = {"P1": 5, "P2": 22, "P3": 70}
mins = np.array([max(5, int(rng.gamma(2.0, scale[p] * 30))) for p in pri])
closed = opened + pd.to_timedelta(mins, unit="m")
is_open = rng.random(n) < 0.1


def fmt(ts):
    return ts.strftime("%Y-%m-%d %H:%M") if rng.random() < 0.6 else ts.strftime("%d/%m/%Y %H:%M")


raw_pri = []
for p in pri:
    r = rng.random()
    raw_pri.append(p if r < 0.6 else p.lower() if r < 0.8 else f" {p} " if r < 0.9 else p.lower() + " ")
d = pd.DataFrame({"ticket_id": dsgen.make_ids("T", n, rng, width=6), "priority": raw_pri,
                  "opened_at": [fmt(t) for t in opened],
                  "closed_at": ["" if o else fmt(c) for o, c in zip(is_open, closed)],
                  "team": dsgen.choice(rng, ["network", "apps", "desk"], n)})
d, _ = dsgen.inject_duplicates(d, int(rng.integers(8, 16)), rng)
t = pd.DataFrame({"priority": pri, "minutes": mins, "open": is_open})
t = t[~t.open]
t["ok"] = t.minutes <= t.priority.map(sla) * 60
rep = t.groupby("priority").agg(closed_tickets=("minutes", "size"), median_hours=("minutes", "median"),
                                within_sla_pct=("ok", "mean")).reset_index()
rep["median_hours"] = (rep.median_hours / 60).round(1)
rep["within_sla_pct"] = (100 * rep.within_sla_pct).round(1)
dsgen.write_outputs(args.out, {"/home/user/tickets.csv": dsgen.df_to_csv_bytes(d),
                               "/home/user/sla.json": json.dumps(sla, indent=1) + "\n"},
                    {"report": dsgen.table_truth(rep), "sla": sla})
