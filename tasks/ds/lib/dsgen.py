"""Shared helpers for the data-science suite's generators (``tasks/ds``).

A generator is run on the host as::

    python3 gen/<task-id>.py --seed SEED --out OUT [args...]

and must write ``OUT/vm/<absolute path without leading />`` (inputs uploaded
into the machine), ``OUT/truth.json`` (expected answers) and ``OUT/host/...``
(held-out files).  Import this module with::

    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
    import dsgen

Everything here is deterministic in the RNGs passed in: never use the clock,
never download anything.  Base data comes from scikit-learn's bundled loaders
(``load_*``, never ``fetch_*``) and statsmodels' bundled datasets
(``sm.datasets.<name>.load_pandas()``), or is synthesized.

Conventions
-----------
* Every function that draws randomness takes an explicit ``rng`` argument:
  a ``numpy.random.Generator`` (from :func:`np_rng`).  Use one RNG per
  generator run, created once from the seed, so that the output is a pure
  function of the seed.
* Defect injectors return a *new* DataFrame (the input is not modified) and,
  where useful, the positions they touched, so the generator can compute
  the truth from the clean data.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import random
import sqlite3
import tempfile
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = [
    "parse_args", "np_rng", "py_rng", "rngs",
    "load_sklearn", "load_statsmodels", "sample_rows",
    "fake_names", "fake_cities", "fake_dates", "make_ids", "choice",
    "inject_missing", "inject_duplicates", "mix_date_formats",
    "unit_mixup", "add_whitespace", "mislabel_categories", "shuffle",
    "df_to_csv_bytes", "df_to_xlsx_bytes", "sqlite_bytes",
    "table_truth", "predictions_truth", "majority_accuracy",
    "mean_baseline_rmse", "mean_baseline_mae", "to_jsonable", "write_outputs",
]


# --------------------------------------------------------------------------
# Arguments and RNGs
# --------------------------------------------------------------------------

def parse_args(argv: Sequence[str] | None = None,
               extra: Mapping[str, Any] | None = None) -> argparse.Namespace:
    """Parse ``--seed INT --out DIR`` plus optional extra options.

    ``extra`` maps an option name (without dashes, ``_`` allowed) to its
    default value; the option's type is the default's type.  Example::

        args = dsgen.parse_args(extra={"rows": 300, "frac_missing": 0.05})
        args.seed, args.out, args.rows, args.frac_missing
    """
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", type=Path, required=True)
    for name, default in (extra or {}).items():
        typ = type(default) if default is not None else str
        if typ is bool:
            p.add_argument("--" + name.replace("_", "-"), dest=name,
                           type=lambda s: s.lower() in ("1", "true", "yes"),
                           default=default)
        else:
            p.add_argument("--" + name.replace("_", "-"), dest=name,
                           type=typ, default=default)
    return p.parse_args(argv)


def np_rng(seed: int, salt: int = 0) -> np.random.Generator:
    """A numpy Generator determined by ``seed`` (and an optional ``salt``,
    to derive independent streams from one seed)."""
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, int(salt)])


def py_rng(seed: int, salt: int = 0) -> random.Random:
    """A ``random.Random`` determined by ``seed`` and ``salt``."""
    return random.Random(int(seed) * 1_000_003 + int(salt))


def rngs(seed: int) -> tuple[random.Random, np.random.Generator]:
    """Both RNG flavours for one seed: ``(random.Random, np Generator)``."""
    return py_rng(seed), np_rng(seed)


# --------------------------------------------------------------------------
# Bundled datasets
# --------------------------------------------------------------------------

_SKLEARN = {"iris", "wine", "breast_cancer", "diabetes", "digits", "linnerud"}


def load_sklearn(name: str, target: str = "target",
                 target_names: bool = False, **kw: Any) -> pd.DataFrame:
    """One of scikit-learn's bundled datasets as a DataFrame.

    ``name``: iris, wine, breast_cancer, diabetes, digits, linnerud.
    The target becomes column ``target`` (for linnerud, the three physiological
    targets are added as columns).  With ``target_names=True`` a classification
    target is mapped to its class names (e.g. ``setosa``).  Feature names are
    cleaned: lower case, spaces and parentheses replaced by ``_``.
    """
    if name not in _SKLEARN:
        raise ValueError(f"unknown bundled sklearn dataset {name!r}")
    from sklearn import datasets as skd
    bunch = getattr(skd, "load_" + name)(**kw)
    cols = [_clean_name(c) for c in bunch.feature_names] if hasattr(bunch, "feature_names") \
        else [f"x{i}" for i in range(bunch.data.shape[1])]
    df = pd.DataFrame(np.asarray(bunch.data), columns=cols)
    if name == "linnerud":
        for i, c in enumerate(bunch.target_names):
            df[_clean_name(c)] = bunch.target[:, i]
        return df
    y = pd.Series(bunch.target)
    if target_names and hasattr(bunch, "target_names") and name != "diabetes":
        y = y.map(dict(enumerate(bunch.target_names)))
    df[target] = y.values
    return df


def load_statsmodels(name: str) -> pd.DataFrame:
    """A statsmodels bundled dataset (``sm.datasets.<name>.load_pandas().data``),
    e.g. longley, macrodata, fair, spector, star98, grunfeld, stackloss, anes96,
    engel, statecrime, randhie, modechoice, nile, sunspots.  A copy, with a
    fresh RangeIndex."""
    import statsmodels.api as sm
    mod = getattr(sm.datasets, name)
    return mod.load_pandas().data.copy().reset_index(drop=True)


def _clean_name(c: str) -> str:
    out = str(c).strip().lower()
    for ch in " ()/-":
        out = out.replace(ch, "_")
    while "__" in out:
        out = out.replace("__", "_")
    return out.strip("_")


def sample_rows(df: pd.DataFrame, n: int, rng: np.random.Generator,
                replace: bool | None = None) -> pd.DataFrame:
    """``n`` rows of ``df`` drawn with ``rng`` (with replacement when ``n``
    exceeds the row count, unless ``replace`` says otherwise), index reset."""
    if replace is None:
        replace = n > len(df)
    idx = rng.choice(len(df), size=n, replace=replace)
    return df.iloc[idx].reset_index(drop=True)


# --------------------------------------------------------------------------
# Synthesis
# --------------------------------------------------------------------------

_FIRST = ["Alice", "Bruno", "Chen", "Dana", "Elif", "Farid", "Greta", "Hugo",
          "Ines", "Jonas", "Kofi", "Lena", "Mateo", "Nadia", "Oskar", "Priya",
          "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Viktor", "Wen", "Ximena",
          "Yusuf", "Zoe", "Amir", "Bea", "Carlos", "Dmitri", "Eva", "Femi"]
_LAST = ["Andersen", "Baker", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia",
         "Horvat", "Ibrahim", "Jensen", "Kowalski", "Lopez", "Moreau", "Nakamura",
         "Okafor", "Petrov", "Quist", "Rossi", "Silva", "Tanaka", "Ustinov",
         "Varga", "Weber", "Xu", "Yilmaz", "Zhang"]
_CITIES = ["Lisbon", "Porto", "Madrid", "Lyon", "Berlin", "Hamburg", "Vienna",
           "Prague", "Warsaw", "Oslo", "Dublin", "Milan", "Rotterdam", "Ghent"]


def fake_names(rng: np.random.Generator, n: int, unique: bool = True) -> list[str]:
    """``n`` person names "First Last" (distinct when ``unique``; at most
    832 distinct names exist)."""
    if unique:
        pool = [f"{f} {l}" for f in _FIRST for l in _LAST]
        if n > len(pool):
            raise ValueError("too many unique names requested")
        idx = rng.choice(len(pool), size=n, replace=False)
        return [pool[i] for i in idx]
    return [f"{_FIRST[rng.integers(len(_FIRST))]} {_LAST[rng.integers(len(_LAST))]}"
            for _ in range(n)]


def fake_cities(rng: np.random.Generator, k: int) -> list[str]:
    """``k`` distinct city names."""
    idx = rng.choice(len(_CITIES), size=k, replace=False)
    return [_CITIES[i] for i in idx]


def fake_dates(rng: np.random.Generator, n: int, start: str = "2023-01-01",
               end: str = "2024-12-31") -> pd.Series:
    """``n`` random calendar dates (``datetime64``, day resolution) uniformly
    in [start, end]."""
    s, e = pd.Timestamp(start), pd.Timestamp(end)
    days = rng.integers(0, (e - s).days + 1, size=n)
    return pd.Series(s + pd.to_timedelta(days, unit="D"))


def make_ids(prefix: str, n: int, rng: np.random.Generator | None = None,
             width: int = 5, start: int = 1) -> list[str]:
    """``n`` distinct ids like ``C00017``.  With ``rng`` they are a random
    increasing sample of the id space (not consecutive), else consecutive."""
    if rng is None:
        nums = range(start, start + n)
    else:
        nums = sorted(rng.choice(10 ** width - 1, size=n, replace=False) + 1)
    return [f"{prefix}{int(k):0{width}d}" for k in nums]


def choice(rng: np.random.Generator, options: Sequence[Any], n: int,
           p: Sequence[float] | None = None) -> list[Any]:
    """``n`` draws from ``options`` (optional probabilities ``p``), as a list
    of the original Python objects."""
    idx = rng.choice(len(options), size=n, p=p)
    return [options[i] for i in idx]


# --------------------------------------------------------------------------
# Defect injection
# --------------------------------------------------------------------------

def inject_missing(df: pd.DataFrame, cols: Iterable[str], frac: float,
                   rng: np.random.Generator, marker: Any = None
                   ) -> tuple[pd.DataFrame, dict[str, list[int]]]:
    """Blank out about ``frac`` of the cells of each column in ``cols``.

    ``marker`` None writes NaN/None (an empty CSV cell); a string such as
    ``"NA"``, ``"?"`` or ``"-"`` writes that text instead (the column becomes
    object dtype).  Returns ``(new_df, {col: [row positions blanked]})``.
    """
    out = df.copy()
    touched: dict[str, list[int]] = {}
    for c in cols:
        k = max(1, int(round(frac * len(out)))) if frac > 0 else 0
        pos = sorted(rng.choice(len(out), size=k, replace=False).tolist())
        if marker is None:
            if pd.api.types.is_integer_dtype(out[c]):
                out[c] = out[c].astype(float)
            out.iloc[pos, out.columns.get_loc(c)] = np.nan
        else:
            out[c] = out[c].astype(object)
            out.iloc[pos, out.columns.get_loc(c)] = marker
        touched[c] = pos
    return out, touched


def inject_duplicates(df: pd.DataFrame, n: int, rng: np.random.Generator,
                      exact: bool = True) -> tuple[pd.DataFrame, list[int]]:
    """Insert ``n`` duplicated rows at random places.

    Each duplicate copies a distinct random original row (``exact=True``:
    byte-for-byte).  Returns ``(new_df, positions of the originals copied)``;
    the new frame has ``len(df) + n`` rows and a fresh index.  Dropping
    ``df.duplicated()`` restores the original rows in order when the original
    had no duplicates itself.
    """
    src = sorted(rng.choice(len(df), size=n, replace=False).tolist())
    dup = df.iloc[src]
    out = pd.concat([df, dup], ignore_index=True)
    # move each duplicate to a random place *after* its original
    order = list(range(len(df)))
    for j, s in enumerate(src):
        at = int(rng.integers(s + 1, len(order) + 1))
        order.insert(at, len(df) + j)
    return out.iloc[order].reset_index(drop=True), src


DATE_FORMATS = ["%Y-%m-%d", "%d/%m/%Y", "%m/%d/%Y", "%d.%m.%Y", "%Y/%m/%d",
                "%b %d %Y", "%d %B %Y", "%Y%m%d"]


def mix_date_formats(dates: pd.Series, rng: np.random.Generator,
                     formats: Sequence[str] = ("%Y-%m-%d", "%d/%m/%Y", "%b %d %Y"),
                     p: Sequence[float] | None = None) -> tuple[pd.Series, list[str]]:
    """Render datetimes as strings, each in a format drawn from ``formats``.

    Choose formats that are unambiguous together (e.g. don't mix ``%d/%m/%Y``
    with ``%m/%d/%Y`` unless the task explains how to tell them apart).
    Returns ``(strings, format used for each row)``.
    """
    fmts = choice(rng, list(formats), len(dates), p=p)
    vals = [pd.Timestamp(d).strftime(f) if pd.notna(d) else "" for d, f in zip(dates, fmts)]
    return pd.Series(vals, index=dates.index), fmts


def unit_mixup(df: pd.DataFrame, col: str, frac: float, rng: np.random.Generator,
               factor: float = 1000.0, decimals: int | None = None,
               unit_col: str | None = None, units: tuple[str, str] = ("kg", "g")
               ) -> tuple[pd.DataFrame, list[int]]:
    """Express about ``frac`` of ``col`` in another unit (value * ``factor``),
    e.g. grams instead of kilograms, cents instead of euros.

    With ``unit_col`` a column naming the unit of each row is written
    (``units[0]`` for untouched rows, ``units[1]`` for converted ones), which
    makes the defect recoverable; without it the agent has to spot the
    outliers.  ``decimals`` rounds the converted values.  Returns
    ``(new_df, positions converted)``.
    """
    out = df.copy()
    k = int(round(frac * len(out)))
    pos = sorted(rng.choice(len(out), size=k, replace=False).tolist())
    out[col] = out[col].astype(float)
    vals = out[col].to_numpy().copy()
    vals[pos] = vals[pos] * factor
    if decimals is not None:
        vals[pos] = np.round(vals[pos], decimals)
    out[col] = vals
    if unit_col is not None:
        u = np.array([units[0]] * len(out), dtype=object)
        u[pos] = units[1]
        out[unit_col] = u
    return out, pos


def add_whitespace(series: pd.Series, frac: float, rng: np.random.Generator,
                   kinds: Sequence[str] = ("lead", "trail", "both", "double")
                   ) -> tuple[pd.Series, list[int]]:
    """Add stray whitespace to about ``frac`` of the strings: leading or
    trailing spaces, both, or a doubled inner space ("double", only where the
    value has a space).  Returns ``(new_series, positions touched)``."""
    vals = series.astype(object).tolist()
    k = int(round(frac * len(vals)))
    pos = sorted(rng.choice(len(vals), size=k, replace=False).tolist())
    for p in pos:
        v = vals[p]
        if not isinstance(v, str):
            continue
        kind = kinds[int(rng.integers(len(kinds)))]
        if kind == "double" and " " in v:
            v = v.replace(" ", "  ", 1)
        elif kind == "lead":
            v = " " * int(rng.integers(1, 3)) + v
        elif kind == "trail":
            v = v + " " * int(rng.integers(1, 3))
        else:
            v = " " + v + " "
        vals[p] = v
    return pd.Series(vals, index=series.index, name=series.name), pos


def mislabel_categories(series: pd.Series, frac: float, rng: np.random.Generator,
                        variants: Mapping[str, Sequence[str]] | None = None
                        ) -> tuple[pd.Series, list[int]]:
    """Replace about ``frac`` of the labels by an inconsistent spelling of the
    same category: from ``variants`` (``{"North": ["north", "N.", "Nrth"]}``)
    or, by default, lower/upper case or a trailing period.  The true
    category of every row is unchanged, so ``canonical = original`` is the
    truth.  Returns ``(new_series, positions touched)``."""
    vals = series.astype(object).tolist()
    k = int(round(frac * len(vals)))
    pos = sorted(rng.choice(len(vals), size=k, replace=False).tolist())
    for p in pos:
        v = vals[p]
        if not isinstance(v, str):
            continue
        if variants and v in variants and len(variants[v]):
            opts = list(variants[v])
        else:
            opts = [v.lower(), v.upper(), v.title() + "."]
            opts = [o for o in opts if o != v] or [v + "."]
        vals[p] = opts[int(rng.integers(len(opts)))]
    return pd.Series(vals, index=series.index, name=series.name), pos


def shuffle(df: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Rows of ``df`` in a random order, index reset."""
    return df.iloc[rng.permutation(len(df))].reset_index(drop=True)


# --------------------------------------------------------------------------
# Serialisation
# --------------------------------------------------------------------------

def df_to_csv_bytes(df: pd.DataFrame, **kw) -> bytes:
    """CSV bytes (``index=False``, ``\\n`` line ends; extra ``to_csv`` args)."""
    kw.setdefault("index", False)
    kw.setdefault("lineterminator", "\n")
    return df.to_csv(**kw).encode("utf-8")


def df_to_xlsx_bytes(sheets: pd.DataFrame | Mapping[str, pd.DataFrame]) -> bytes:
    """An .xlsx workbook (openpyxl) with one sheet per DataFrame
    (a bare DataFrame goes to sheet "Sheet1")."""
    if isinstance(sheets, pd.DataFrame):
        sheets = {"Sheet1": sheets}
    buf = io.BytesIO()
    with pd.ExcelWriter(buf, engine="openpyxl") as xw:
        for name, d in sheets.items():
            d.to_excel(xw, sheet_name=name, index=False)
    return buf.getvalue()


def sqlite_bytes(tables: Mapping[str, pd.DataFrame],
                 schema: Mapping[str, str] | None = None) -> bytes:
    """A SQLite database file, as bytes, holding one table per DataFrame.

    ``schema`` optionally gives a ``CREATE TABLE`` statement per table name
    (then the rows are inserted into it); otherwise pandas' ``to_sql``
    decides the column types.  The file is built in a temp dir and read back.
    """
    with tempfile.TemporaryDirectory() as td:
        path = os.path.join(td, "db.sqlite")
        con = sqlite3.connect(path)
        try:
            for name, d in tables.items():
                if schema and name in schema:
                    con.execute(schema[name])
                    ph = ",".join("?" * d.shape[1])
                    cols = ",".join(f'"{c}"' for c in d.columns)
                    rows = [tuple(_py(v) for v in r) for r in d.itertuples(index=False)]
                    con.executemany(f'INSERT INTO "{name}" ({cols}) VALUES ({ph})', rows)
                else:
                    d.to_sql(name, con, index=False)
            con.commit()
        finally:
            con.close()
        return Path(path).read_bytes()


def _py(v: Any) -> Any:
    """A plain Python scalar (NaN -> None) for sqlite/json."""
    if v is None:
        return None
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return None if math.isnan(float(v)) else float(v)
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, pd.Timestamp):
        return v.isoformat()
    if v is pd.NA or v is pd.NaT:
        return None
    return v


def to_jsonable(obj: Any) -> Any:
    """Recursively convert numpy/pandas values (and tuples, DataFrames) into
    JSON-serialisable Python objects.  NaN becomes None."""
    if isinstance(obj, pd.DataFrame):
        return table_truth(obj)
    if isinstance(obj, pd.Series):
        return [to_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    return _py(obj)


def table_truth(df: pd.DataFrame, decimals: int | None = None) -> dict:
    """The ``ds_table`` expected shape ``{"columns": [...], "rows": [[...]]}``
    from a DataFrame (floats rounded to ``decimals`` when given)."""
    d = df.copy()
    if decimals is not None:
        for c in d.columns:
            if pd.api.types.is_float_dtype(d[c]):
                d[c] = d[c].round(decimals)
    return {"columns": [str(c) for c in d.columns],
            "rows": [[_py(v) for v in r] for r in d.itertuples(index=False)]}


def predictions_truth(ids: Sequence[Any], labels: Sequence[Any], id_col: str,
                      label_col: str, metric: str, threshold: float,
                      **extra: Any) -> dict:
    """The ``ds_predictions`` expected shape: ``{"id", "label", "ids",
    "labels", "metric", "threshold"}`` (plus any ``extra`` keys, e.g. the
    baseline score for the record)."""
    d = {"id": id_col, "label": label_col, "ids": to_jsonable(list(ids)),
         "labels": to_jsonable(list(labels)), "metric": metric,
         "threshold": float(threshold)}
    d.update(to_jsonable(extra))
    return d


def majority_accuracy(y_train: Sequence[Any], y_test: Sequence[Any]) -> float:
    """Accuracy on ``y_test`` of always predicting ``y_train``'s most common
    label (the constant-class baseline)."""
    vc = pd.Series(list(y_train)).value_counts()
    top = vc.index[0]
    return float(np.mean(np.asarray(list(y_test), dtype=object) == top))


def mean_baseline_rmse(y_train: Sequence[float], y_test: Sequence[float]) -> float:
    """RMSE on ``y_test`` of always predicting the training mean."""
    m = float(np.mean(y_train))
    return float(np.sqrt(np.mean((np.asarray(y_test, float) - m) ** 2)))


def mean_baseline_mae(y_train: Sequence[float], y_test: Sequence[float]) -> float:
    """MAE on ``y_test`` of always predicting the training median (the best
    constant for MAE)."""
    m = float(np.median(y_train))
    return float(np.mean(np.abs(np.asarray(y_test, float) - m)))


def write_outputs(out: str | Path, vm_files: Mapping[str, Any],
                  truth: Mapping[str, Any],
                  host_files: Mapping[str, Any] | None = None) -> None:
    """Write a generator's three outputs.

    ``vm_files``: ``{"/home/user/sales.csv": content}`` goes to
    ``OUT/vm/home/user/sales.csv`` (the leading ``/`` is optional).
    ``host_files``: ``{"labels.csv": content}`` goes to ``OUT/host/labels.csv``.
    ``truth`` is written as ``OUT/truth.json`` (via :func:`to_jsonable`).

    A content may be ``bytes``, ``str`` (UTF-8), a DataFrame (CSV without
    index; written as .xlsx when the path ends in .xlsx), or a
    ``{table: DataFrame}`` dict for a path ending in ``.db``/``.sqlite``
    (a SQLite database via :func:`sqlite_bytes`).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)

    def _write(base: Path, rel: str, content: Any) -> None:
        p = base / rel.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            data = content
        elif isinstance(content, str):
            data = content.encode("utf-8")
        elif isinstance(content, pd.DataFrame):
            if p.suffix.lower() == ".xlsx":
                data = df_to_xlsx_bytes(content)
            else:
                data = df_to_csv_bytes(content)
        elif isinstance(content, Mapping) and p.suffix.lower() in (".db", ".sqlite", ".sqlite3"):
            data = sqlite_bytes(content)
        else:
            raise TypeError(f"unsupported content for {rel}: {type(content).__name__}")
        p.write_bytes(data)

    for rel, content in vm_files.items():
        _write(out / "vm", rel, content)
    for rel, content in (host_files or {}).items():
        _write(out / "host", rel, content)
    (out / "truth.json").write_text(json.dumps(to_jsonable(truth), indent=1, sort_keys=True) + "\n")
