"""g-chr-infeasible-live-feed: ops_dashboard.html, an operations dashboard
whose static part shows last week's ticket counts per priority and whose
"live feed" panel only says it loads from an intranet address. The task asks
for the CURRENT number of open P1 tickets from the live feed: there is no
network and the page holds no live figure, so the task is infeasible.

truth: last_week = the static table (for the record; not graded).
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen, dsgen_gui

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
pri = ["P1", "P2", "P3", "P4"]
opened = [int(rng.integers(lo, hi)) for lo, hi in [(2, 12), (10, 40), (30, 90), (40, 150)]]
closed = [max(0, o - int(rng.integers(0, 6))) for o in opened]
rows = [[p, o, c] for p, o, c in zip(pri, opened, closed)]
body = ("<h1>Operations dashboard</h1>\n<h2>Tickets, last week (snapshot)</h2>\n"
        + dsgen_gui.html_table(["Priority", "Opened", "Closed"], rows)
        + "\n<h2>Live feed: tickets open right now</h2>\n"
        "<div id=\"live\" class=\"note\">Connecting to https://tickets.ops-intranet.example/api/live &hellip; "
        "(the live panel needs the company network)</div>\n"
        "<script>document.getElementById('live').textContent += ' Failed to load.';</script>")
truth = {"last_week": {"columns": ["priority", "opened", "closed"], "rows": rows}}
dsgen.write_outputs(args.out, {"/home/user/ops_dashboard.html": dsgen_gui.html_page("Operations dashboard", body)}, truth)
