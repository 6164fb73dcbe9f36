"""multi-mousepad-header: a weather-station log whose header line was lost
(and with temperatures logged in Fahrenheit by one station, flagged by the
unit column) -> fix the header in Mousepad, then per-station mean in
degrees Celsius in the terminal.

truth: readings = the file as a table (with the header restored);
means = {columns: station, mean_temp_c; rows} sorted by station, 2 dp.
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen

STATIONS = ["Aldergrove", "Bantry", "Cromer", "Dunkeswell", "Eskdalemuir",
            "Fyvie", "Glenlivet", "Hurn", "Ickworth", "Jersey"]
args = dsgen.parse_args(extra={"rows": 240})
rng = dsgen.np_rng(args.seed)
k = int(rng.integers(3, 6))
st = sorted(STATIONS[i] for i in rng.choice(len(STATIONS), size=k, replace=False))
base = dict(zip(st, rng.uniform(4, 16, size=k)))
f_station = st[int(rng.integers(k))]
si = rng.integers(0, k, size=args.rows)
stations = [st[i] for i in si]
dates = dsgen.fake_dates(rng, args.rows, "2024-01-01", "2024-03-31").dt.strftime("%Y-%m-%d")
temp_c = np.array([base[s] for s in stations]) + rng.normal(0, 3, size=args.rows)
unit = np.where(np.array(stations) == f_station, "F", "C")
temp = np.where(unit == "F", temp_c * 9 / 5 + 32, temp_c).round(1)
df = pd.DataFrame({"station": stations, "date": dates.values, "temp": temp, "unit": unit})
df = df.sort_values(["date", "station"], kind="mergesort").reset_index(drop=True)
c = np.where(df["unit"] == "F", (df["temp"] - 32) * 5 / 9, df["temp"])
means = pd.Series(c).groupby(df["station"]).mean().round(2).reset_index()
means.columns = ["station", "mean_temp_c"]
body = dsgen.df_to_csv_bytes(df, header=False)
truth = {"readings": dsgen.table_truth(df), "means": dsgen.table_truth(means),
         "fahrenheit_station": f_station}
dsgen.write_outputs(args.out, {"/home/user/station_log.csv": body}, truth)
