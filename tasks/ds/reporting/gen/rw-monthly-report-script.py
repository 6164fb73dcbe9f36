"""rw-monthly-report-script: a re-runnable monthly report over messy amounts.

VM:    /home/user/transactions.csv  txn_id,date,amount,account
       date: YYYY-MM-DD or 'DD Mon YYYY'; amount as text: '1234.50',
       '1,234.50', 'EUR 1,234.50', refunds in parentheses '(45.00)';
       exact duplicate rows.
Truth: "report": month,transactions,net_eur,largest_eur per YYYY-MM after
       dropping duplicates, sorted by month.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
n = int(rng.integers(200, 350))
start = pd.Timestamp("2023-01-01") + pd.Timedelta(days=int(rng.integers(0, 365)))
dates = pd.Series(start + pd.to_timedelta(rng.integers(0, int(rng.integers(150, 240)), n), unit="D"))
amt = np.round(rng.lognormal(5.5, 1.0, n), 2)
refund = rng.random(n) < 0.1
val = np.where(refund, -np.round(amt * 0.3, 2), amt)


def fmt(v):
    a = abs(v)
    k = int(rng.integers(3))
    s = f"{a:.2f}" if k == 0 else f"{a:,.2f}" if k == 1 else f"EUR {a:,.2f}"
    return f"({s})" if v < 0 else s


d = pd.DataFrame({"txn_id": dsgen.make_ids("X", n, rng, width=7),
                  "date": dsgen.mix_date_formats(dates, rng, formats=("%Y-%m-%d", "%d %b %Y"))[0],
                  "amount": [fmt(v) for v in val], "account": dsgen.choice(rng, ["ops", "sales", "rnd"], n)})
d, _ = dsgen.inject_duplicates(d, int(rng.integers(10, 20)), rng)
ref = d.drop_duplicates()
month = [pd.Timestamp(x).strftime("%Y-%m") if x[:4].isdigit() else pd.to_datetime(x, format="%d %b %Y").strftime("%Y-%m") for x in ref.date]


def num(s):
    neg = s.startswith("(")
    v = float(s.strip("()").replace("EUR", "").replace(",", "").strip())
    return -v if neg else v


t = pd.DataFrame({"month": month, "v": [num(s) for s in ref.amount]})
rep = t.groupby("month").agg(transactions=("v", "size"), net_eur=("v", "sum"), largest_eur=("v", "max")).reset_index()
rep["net_eur"] = rep.net_eur.round(2)
dsgen.write_outputs(args.out, {"/home/user/transactions.csv": dsgen.df_to_csv_bytes(d)}, {"report": dsgen.table_truth(rep)})
