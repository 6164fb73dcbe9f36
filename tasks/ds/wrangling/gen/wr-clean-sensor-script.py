"""wr-clean-sensor-script: messy weather-station readings to a daily summary.

VM:    /home/user/readings.csv  columns station,timestamp,temp,unit
       defects: station names with stray spaces; timestamps in three formats
       (YYYY-MM-DD HH:MM, DD/MM/YYYY HH:MM, "Mon DD YYYY HH:MM"); ~25% of the
       rows in Fahrenheit (unit F, else C); ~4% missing temp (empty cell);
       ~5% exact duplicate rows.
Truth: "daily": per (station, date) the mean temperature in Celsius (2 dp) and
       the number n of distinct readings with a temperature, sorted by
       station, date.  Computed from the rows as written (F converted back
       with (F-32)*5/9), after dropping exact duplicates and missing temps.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import dsgen  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

args = dsgen.parse_args()
rng = dsgen.np_rng(args.seed)
stations = [f"{c} {s}" for c, s in zip(dsgen.fake_cities(rng, 4), ["North", "Airport", "Harbour", "Hill"])]
start = pd.Timestamp("2024-01-01") + pd.Timedelta(days=int(rng.integers(0, 300)))
ndays = int(rng.integers(5, 9))
rows = []
for st in stations:
    base = rng.uniform(-2, 22)
    for d in range(ndays):
        day = start + pd.Timedelta(days=d)
        for h in sorted(rng.choice(24, size=int(rng.integers(4, 9)), replace=False)):
            temp_c = base + 4 * np.sin((h - 9) / 24 * 2 * np.pi) + rng.normal(0, 1.2)
            rows.append({"station": st, "ts": day + pd.Timedelta(hours=int(h), minutes=int(rng.choice([0, 15, 30, 45]))),
                         "temp_c": round(float(temp_c), 1)})
df = pd.DataFrame(rows)
df = dsgen.shuffle(df, rng)
n = len(df)
isF = rng.random(n) < 0.25
temp = np.where(isF, np.round(df["temp_c"] * 9 / 5 + 32, 1), df["temp_c"])
ts, _ = dsgen.mix_date_formats(df["ts"], rng, formats=("%Y-%m-%d %H:%M", "%d/%m/%Y %H:%M", "%b %d %Y %H:%M"))
out = pd.DataFrame({"station": df["station"], "timestamp": ts, "temp": temp, "unit": np.where(isF, "F", "C")})
out, _ = dsgen.inject_missing(out, ["temp"], 0.04, rng)
out["station"], _ = dsgen.add_whitespace(out["station"], 0.2, rng, kinds=("lead", "trail", "both"))
out, _ = dsgen.inject_duplicates(out, max(3, int(0.05 * n)), rng)

# truth: independent reference computation on the written rows
ref = out.drop_duplicates().copy()
ref = ref[ref["temp"].notna()]
ref["station"] = ref["station"].str.strip()
ref["date"] = [df_ts.strftime("%Y-%m-%d") for df_ts in pd.Series(
    [pd.Timestamp(x) if x[:4].isdigit() else (pd.to_datetime(x, format="%d/%m/%Y %H:%M") if "/" in x else pd.to_datetime(x, format="%b %d %Y %H:%M"))
     for x in ref["timestamp"]])]
ref["tc"] = np.where(ref["unit"] == "F", (ref["temp"] - 32) * 5 / 9, ref["temp"])
daily = ref.groupby(["station", "date"]).agg(mean_temp_c=("tc", "mean"), n=("tc", "size")).reset_index()
daily["mean_temp_c"] = daily["mean_temp_c"].round(2)
nounit = ref.groupby(["station", "date"])["temp"].mean().round(2).reset_index()

csv = out.to_csv(index=False, lineterminator="\n", float_format="%.1f")
dsgen.write_outputs(args.out, {"/home/user/readings.csv": csv},
                    {"daily": dsgen.table_truth(daily), "rows": len(out), "days": ndays})
