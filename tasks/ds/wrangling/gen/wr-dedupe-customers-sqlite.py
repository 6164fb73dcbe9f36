"""wr-dedupe-customers-sqlite: a CRM table in SQLite with duplicate sign-ups.

VM:    /home/user/crm.db, table customers(id, name, email, city, signup_date).
       Some customers signed up twice or three times (new id, the email in a
       different case and/or with stray spaces); city names carry stray spaces.
Truth: "counts": per trimmed city, the number of distinct customers (emails
       compared ignoring case and leading/trailing spaces), sorted by city.
       "raw_counts": the naive row counts (for the record / gaming).
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args(extra={"customers": 0})
rng = dsgen.np_rng(args.seed)
n = args.customers or int(rng.integers(180, 260))
cities = dsgen.fake_cities(rng, int(rng.integers(5, 8)))
names = dsgen.fake_names(rng, n)
domains = ["mail.example", "post.example", "inbox.example", "corp.example"]
emails = []
for i, nm in enumerate(names):
    first, last = nm.lower().split(" ")
    emails.append(f"{first}.{last}{int(rng.integers(1, 99))}@{domains[int(rng.integers(len(domains)))]}")
city = dsgen.choice(rng, cities, n, p=rng.dirichlet([3.0] * len(cities)))
clean = pd.DataFrame({"name": names, "email": emails, "city": city})

# duplicate sign-ups: 10-20% of customers appear again, email varied
rows = clean.to_dict("records")
k = int(round(n * rng.uniform(0.10, 0.20)))
for src in rng.choice(n, size=k, replace=False):
    r = dict(rows[src])
    e = r["email"]
    v = int(rng.integers(4))
    if v == 0:
        e = e.upper()
    elif v == 1:
        e = e[0].upper() + e[1:]
    elif v == 2:
        e = " " + e
    else:
        e = e.title() + "  "
    r["email"] = e
    rows.append(r)
    if rng.random() < 0.2:  # a third sign-up, exact same email
        rows.append(dict(r))
db = pd.DataFrame(rows)
db = dsgen.shuffle(db, rng)
db["city"], _ = dsgen.add_whitespace(db["city"], 0.15, rng, kinds=("lead", "trail", "both"))
db.insert(0, "id", sorted(rng.choice(9000, size=len(db), replace=False) + 1000))
db["signup_date"] = dsgen.fake_dates(rng, len(db), "2022-01-01", "2024-06-30").dt.strftime("%Y-%m-%d")

counts = clean.groupby("city")["email"].nunique().reset_index()
counts.columns = ["city", "customers"]
counts = counts.sort_values("city").reset_index(drop=True)
raw = db.assign(city=db["city"].str.strip()).groupby("city").size().reset_index(name="customers")

schema = {"customers": "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, email TEXT, city TEXT, signup_date TEXT)"}
dsgen.write_outputs(
    args.out,
    {"/home/user/crm.db": dsgen.sqlite_bytes({"customers": db}, schema)},
    {"counts": dsgen.table_truth(counts), "raw_counts": dsgen.table_truth(raw),
     "rows": len(db), "customers": n},
)
