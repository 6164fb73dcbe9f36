"""my-chr-fx-invoices: fx_rates.html (month-end rates quoted as units of
foreign currency per 1 EUR, like the ECB) shown in Chromium; invoices.csv
(invoice_id, client, currency, amount, status paid/void/open) -> paid
invoice value per client in EUR.

The trap: multiplying by the quote instead of dividing.

truth: clients = {columns: client, paid_invoices, total_eur; rows} sorted
by total_eur descending.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_gui

CUR = {"USD": 1.08, "GBP": 0.85, "CHF": 0.97, "SEK": 11.4, "NOK": 11.6, "PLN": 4.3, "JPY": 168.0, "CZK": 24.9}
CLIENTS = ["Acme Tools", "Borealis AB", "Cobalt Systems", "Delta Foods", "Everest Logistics", "Fjord Marine",
           "Granite Bank", "Helix Pharma", "Ion Motors", "Juniper Retail"]
args = dsgen.parse_args(extra={"rows": 260})
rng = dsgen.np_rng(args.seed)
curs = [list(CUR)[i] for i in sorted(rng.choice(len(CUR), size=5, replace=False))]
rates = {c: round(CUR[c] * float(rng.uniform(0.95, 1.05)), 4) for c in curs}
k = int(rng.integers(6, 10))
clients = [CLIENTS[i] for i in sorted(rng.choice(len(CLIENTS), size=k, replace=False))]
n = args.rows
cur = dsgen.choice(rng, ["EUR"] + curs, n, p=[0.3] + [0.14] * 5)
eur = rng.lognormal(7.0, 0.8, size=n)
amount = np.round(eur * np.array([1.0 if c == "EUR" else rates[c] for c in cur]), 2)
df = pd.DataFrame({"invoice_id": dsgen.make_ids("INV", n, rng, width=5),
                   "client": dsgen.choice(rng, clients, n, p=list(rng.dirichlet([2] * k))),
                   "currency": cur, "amount": amount,
                   "status": dsgen.choice(rng, ["paid", "open", "void"], n, p=[0.7, 0.2, 0.1])})
paid = df[df.status == "paid"].copy()
paid["eur"] = [a if c == "EUR" else a / rates[c] for a, c in zip(paid.amount, paid.currency)]
t = paid.groupby("client").agg(paid_invoices=("eur", "size"), total_eur=("eur", "sum")).reset_index()
t["total_eur"] = t.total_eur.round(2)
t = t.sort_values("total_eur", ascending=False, kind="mergesort").reset_index(drop=True)
body = ("<h1>Treasury FX rates</h1>\n<p class=\"note\">Month-end reference rates, 28 June 2024. "
        "Each rate is the number of units of the currency that 1 EUR buys (1 EUR = rate &times; currency).</p>\n"
        + dsgen_gui.html_table(["Currency", "Rate per 1 EUR"], [[c, f"{rates[c]:.4f}"] for c in curs])
        + "\n<p class=\"note\">Amounts already in EUR need no conversion.</p>")
dsgen.write_outputs(args.out, {"/home/user/fx_rates.html": dsgen_gui.html_page("Treasury FX rates", body),
                               "/home/user/invoices.csv": df}, {"clients": dsgen.table_truth(t), "rates": rates})
