"""rw-markdown-ticket-summary: a support-ticket export -> a markdown summary
whose four numbers are checked line by line.

VM:    /home/user/tickets.csv  ticket_id,opened_at,closed_at,priority,channel
       defects: exact duplicate rows; timestamps as 'YYYY-MM-DD HH:MM' or
       day-first 'DD/MM/YYYY HH:MM'; priority in mixed case with spaces;
       closed_at empty for open tickets.
Truth: tickets (distinct), closed, median_hours (closed tickets, 1 dp),
       high_pct (share of tickets with priority high, 1 dp); *_dups variants.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
n = int(rng.integers(250, 400))
opened = pd.Series(pd.Timestamp("2024-03-01") + pd.to_timedelta(rng.integers(0, 200 * 24 * 60, n), unit="min")).dt.floor("min")
prio = dsgen.choice(rng, ["low", "medium", "high"], n, p=[0.4, 0.4, 0.2])
hours = np.array([rng.gamma(1.5, {"low": 30, "medium": 18, "high": 6}[p]) for p in prio])
closed = (opened + pd.to_timedelta(np.round(hours * 60), unit="min"))
is_open = rng.random(n) < 0.1
d = pd.DataFrame({"ticket_id": dsgen.make_ids("T", n, rng, width=6), "opened": opened, "closed": closed.where(~is_open),
                  "priority": prio, "channel": dsgen.choice(rng, ["email", "phone", "chat"], n)})
raw = pd.DataFrame({"ticket_id": d.ticket_id,
                    "opened_at": dsgen.mix_date_formats(d.opened, rng, formats=("%Y-%m-%d %H:%M", "%d/%m/%Y %H:%M"))[0],
                    "closed_at": dsgen.mix_date_formats(d.closed, rng, formats=("%Y-%m-%d %H:%M", "%d/%m/%Y %H:%M"))[0],
                    "priority": dsgen.mislabel_categories(pd.Series(prio), 0.25, rng,
                                                          {p: [p.upper(), p.title(), " " + p, p + " "] for p in ["low", "medium", "high"]})[0],
                    "channel": d.channel})
raw, _ = dsgen.inject_duplicates(raw, int(rng.integers(15, 30)), rng)


def summ(x):
    c = x[x.closed_at != ""]
    def ts(s):
        return pd.to_datetime(s, format="%d/%m/%Y %H:%M") if "/" in s else pd.to_datetime(s, format="%Y-%m-%d %H:%M")
    h = [(ts(b) - ts(a)).total_seconds() / 3600 for a, b in zip(c.opened_at, c.closed_at)]
    return {"tickets": int(len(x)), "closed": int(len(c)), "median_hours": round(float(np.median(h)), 1),
            "high_pct": round(float(100 * (x.priority.str.strip().str.lower() == "high").mean()), 1)}


good = summ(raw.drop_duplicates())
dups = summ(raw)
truth = dict(good)
truth.update({k + "_dups": v for k, v in dups.items()})
dsgen.write_outputs(args.out, {"/home/user/tickets.csv": dsgen.df_to_csv_bytes(raw)}, truth)
