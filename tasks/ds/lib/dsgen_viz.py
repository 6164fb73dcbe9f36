"""Extra generator helpers for the visualisation, reporting and multiapp
stages of the data-science suite (``tasks/ds``).  Builds on :mod:`dsgen`.

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
    import dsgen, dsgen_viz
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

import dsgen

REGIONS = ["North", "South", "East", "West", "Central", "Coastal",
           "Highlands", "Islands", "Lakeside", "Riverside"]
PRODUCTS = {"Widget": 12.5, "Gadget": 24.0, "Doohickey": 7.25, "Gizmo": 41.0,
            "Sprocket": 3.8, "Flange": 15.6, "Bracket": 9.9}


def orders(rng: np.random.Generator, n: int, k_regions: int = 5,
           start: str = "2024-01-01", end: str = "2024-12-31") -> pd.DataFrame:
    """A synthetic order table: order_id, date (datetime64), region, product,
    units (int), unit_price (float, 2 dp).  Regions are ``k_regions`` drawn
    from :data:`REGIONS`, each with its own popularity and basket size, so
    that totals differ clearly with the seed."""
    regs = [REGIONS[i] for i in sorted(rng.choice(len(REGIONS), size=k_regions, replace=False))]
    pop = rng.dirichlet(np.ones(k_regions) * 2.0)
    basket = rng.uniform(1.0, 3.0, size=k_regions)
    prods = list(PRODUCTS)
    ri = rng.choice(k_regions, size=n, p=pop)
    pi = rng.choice(len(prods), size=n)
    units = np.maximum(1, rng.poisson(basket[ri] * 3)).astype(int)
    price = np.array([PRODUCTS[prods[i]] for i in pi]) * rng.uniform(0.9, 1.1, size=n)
    return pd.DataFrame({
        "order_id": dsgen.make_ids("O", n, rng, width=6),
        "date": dsgen.fake_dates(rng, n, start, end).values,
        "region": [regs[i] for i in ri],
        "product": [prods[i] for i in pi],
        "units": units,
        "unit_price": np.round(price, 2),
    })


def calc_ready_script() -> bytes:
    """The examples' LibreOffice Calc readiness probe
    (tasks/examples/data/calc_ready.py), for upload to /tmp by a generator."""
    p = Path(__file__).resolve().parents[2] / "examples" / "data" / "calc_ready.py"
    return p.read_bytes()


def rounded(values: Sequence[float], nd: int = 2) -> list[float]:
    return [round(float(v), nd) for v in values]
