"""g-calc-pivot-revenue: sales.xlsx with sheet "Sales" (order_id, region,
channel, units, unit_price; some region/channel labels carry stray spaces)
and sheet "Pivot" (regions down A2:A5, channels across B1:D1, empty cells)
-> fill the revenue (units * unit_price) cross-tab in Calc.

truth: pivot = {columns: region, <channels...>; rows} (2 dp).
"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
import numpy as np
import pandas as pd
import dsgen, dsgen_gui

REGIONS = ["North", "South", "East", "West", "Central", "Coastal", "Alpine"]
CHANNELS = ["Online", "Retail", "Wholesale", "Phone", "Partner"]
args = dsgen.parse_args(extra={"rows": 240})
rng = dsgen.np_rng(args.seed)
regions = [REGIONS[i] for i in sorted(rng.choice(len(REGIONS), size=4, replace=False))]
channels = [CHANNELS[i] for i in sorted(rng.choice(len(CHANNELS), size=3, replace=False))]
n = args.rows
reg = dsgen.choice(rng, regions, n)
ch = dsgen.choice(rng, channels, n)
units = rng.integers(1, 40, size=n)
price = np.round(rng.uniform(2.5, 120.0, size=n), 2)
df = pd.DataFrame({"order_id": dsgen.make_ids("O", n, rng, width=6), "region": reg, "channel": ch,
                   "units": units, "unit_price": price})
piv = (df.assign(rev=df.units * df.unit_price).pivot_table(index="region", columns="channel", values="rev",
                                                             aggfunc="sum", fill_value=0.0)
       .reindex(index=regions, columns=channels, fill_value=0.0))
shown = df.copy()
shown["region"], _ = dsgen.add_whitespace(df["region"], 0.12, rng, kinds=("lead", "trail", "both"))
shown["channel"], _ = dsgen.add_whitespace(df["channel"], 0.08, rng, kinds=("trail", "both"))
pivot_sheet = pd.DataFrame({"region": regions, **{c: [None] * 4 for c in channels}})
truth = {"pivot": {"columns": ["region"] + channels,
                   "rows": [[r] + [round(float(piv.loc[r, c]), 2) for c in channels] for r in regions]}}
dsgen.write_outputs(args.out, {"/home/user/sales.xlsx": dsgen_gui.xlsx_bytes({"Sales": shown, "Pivot": pivot_sheet}),
                               **dsgen_gui.calc_vm_files("g-calc-pivot-revenue")}, truth)
