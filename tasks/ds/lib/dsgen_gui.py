"""Shared helpers for the GUI-driven ds tasks (files ``g-*``): LibreOffice
Calc, Mousepad and Chromium.  Generators import it next to ``dsgen``::

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
    import dsgen, dsgen_gui

Nothing here draws randomness on its own: pass the generator's RNG.
"""
from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any, Sequence

CALC_READY_VM = "/tmp/deskenv-calc-ready.py"


def calc_ready_script() -> bytes:
    """The examples' LibreOffice Calc readiness probe
    (tasks/examples/data/calc_ready.py), uploaded to /tmp by a generator so
    the setup can wait until Calc is really ready for input."""
    p = Path(__file__).resolve().parents[2] / "examples" / "data" / "calc_ready.py"
    return p.read_bytes()


def lo_profile(task_id: str) -> str:
    """A LibreOffice user installation of the task's own under /home/user.

    soffice's single-instance pipe lives in /tmp and is named after the user
    installation's URL: on the local provider (/tmp shared between desktops,
    /home/user private) every desktop that uses the default profile talks to
    the FIRST soffice started on the host, which then tries to open the other
    desktop's /home/user/... file (seen: "/home/user/budget.xlsx does not
    exist" popping up over another task's workbook). A profile path of the
    task's own keeps its soffice apart."""
    return f"/home/user/.lo-{task_id}"


def calc_vm_files(task_id: str) -> dict:
    """Files a Calc task's generator uploads besides its workbook: the
    readiness probe and the guest image's LibreOffice settings (no first-start
    dialogs, no format warning on save) in the task's own profile."""
    xcu = (Path(__file__).resolve().parents[3] / "vm-images" / "debian-desktop" / "overlay" / "etc" / "deskenv"
           / "libreoffice-registrymodifications.xcu").read_bytes()
    # AutoInput off: with it, Calc's function-name completion ate and re-cased letters of formulas
    # typed quickly by the oracle (MEDIAN( came out as diian(, PERCENTILE( as eeile()
    off = (b'<item oor:path="/org.openoffice.Office.Calc/Input"><prop oor:name="AutoInput" oor:op="fuse">'
           b'<value>false</value></prop></item>\n')
    xcu = xcu.replace(b"</oor:items>", off + b"</oor:items>")
    return {CALC_READY_VM: calc_ready_script(),
            lo_profile(task_id) + "/user/registrymodifications.xcu": xcu}


def calc_setup(xlsx: str, generator: str, args: Sequence[str] = (), terminal: bool = False,
               task_id: str | None = None) -> list:
    """The config steps of a Calc task: generate, [an xterm behind], open the
    workbook, wait for its lock file, for Calc's status bar, focus it, then
    send a first key and wait for its effect on the Name Box (Calc handles
    the first keyboard input after loading late)."""
    name = Path(xlsx).name
    title = f"{name} - LibreOffice Calc"
    steps: list = [{"type": "generate", "parameters": {"generator": generator, "args": list(args)}}]
    if terminal:
        steps += terminal_setup()
    steps += [
        {"type": "open", "parameters": {"path": xlsx}} if task_id is None else
        {"type": "launch", "parameters": {"command": ["soffice", "--calc", "-env:UserInstallation=file://" + lo_profile(task_id), xlsx]}},
        {"type": "execute", "parameters": {"command": ["test", "-e", str(Path(xlsx).parent / f".~lock.{name}#")],
                                           "until": {"returncode": 0}}},
        {"type": "execute", "parameters": {"command": ["python3", CALC_READY_VM, title], "until": {"returncode": 0}}},
        {"type": "activate_window", "parameters": {"window_name": title, "strict": True}},
        {"type": "execute", "parameters": {"command": f"test \"$(xdotool getactivewindow getwindowname)\" = '{title}'",
                                           "shell": True, "until": {"returncode": 0}}},
        {"type": "execute", "parameters": {"command": ["xdotool", "key", "--clearmodifiers", "ctrl+Home", "Right"]}},
        {"type": "execute", "parameters": {"command": ["python3", CALC_READY_VM, title, "B1"], "until": {"returncode": 0}}},
        {"type": "execute", "parameters": {"command": ["xdotool", "key", "--clearmodifiers", "ctrl+Home"]}},
        {"type": "execute", "parameters": {"command": ["python3", CALC_READY_VM, title, "A1"], "until": {"returncode": 0}}},
    ]
    return steps


def calc_saved_postconfig(xlsx: str) -> dict:
    """Postconfig step: wait (max 20 s) until Calc has written the workbook
    (newer than its lock file, or the lock gone) and no temp file is left."""
    d = str(Path(xlsx).parent)
    name = Path(xlsx).name
    return {"type": "execute", "parameters": {
        "command": (f"timeout 20 sh -c 'cd {d}; until [ {name} -nt \".~lock.{name}#\" ] || [ ! -e \".~lock.{name}#\" ]; "
                    "do sleep 0.3; done; until ! ls lu*.tmp >/dev/null 2>&1; do sleep 0.3; done'; true"),
        "shell": True}}


def terminal_setup() -> list:
    return [
        {"type": "launch", "parameters": {"command": ["xterm", "-xrm", "XTerm.vt100.allowTitleOps: false", "-T", "Terminal",
                                                      "-geometry", "140x40+100+100"]}},
        {"type": "execute", "parameters": {"command": ["xdotool", "search", "--onlyvisible", "--name", "^Terminal$"],
                                           "until": {"returncode": 0}}},
        {"type": "activate_window", "parameters": {"window_name": "Terminal", "strict": True}},
    ]


def python_idle_postconfig() -> dict:
    return {"type": "execute", "parameters": {
        "command": "timeout 120 sh -c 'while pgrep -u user -f \"^(python3|sqlite3) \" >/dev/null; do sleep 0.5; done'; true",
        "shell": True}}


def html_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], cls: str = "data") -> str:
    """An HTML table (escaped cells)."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = "\n".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in r) + "</tr>" for r in rows)
    return f"<table class=\"{cls}\">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"


def html_page(title: str, body: str) -> str:
    css = ("body{font-family:DejaVu Sans,sans-serif;margin:24px;color:#222}"
           "table{border-collapse:collapse;margin:12px 0}td,th{border:1px solid #999;padding:4px 10px;text-align:right}"
           "th{background:#e8eef7}td:first-child,th:first-child{text-align:left}.note{color:#666;font-size:90%}")
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{css}</style></head>\n<body>\n{body}\n</body></html>\n")


def dumps(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def xlsx_bytes(sheets) -> bytes:
    """dsgen.df_to_xlsx_bytes, made byte-for-byte deterministic: openpyxl
    stamps the workbook's created/modified properties and the zip entries
    with the clock; both are set to a fixed time (2024-01-01)."""
    import io
    import re
    import zipfile
    import dsgen
    raw = dsgen.df_to_xlsx_bytes(sheets)
    src = zipfile.ZipFile(io.BytesIO(raw))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == "docProps/core.xml":
                data = re.sub(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", b"2024-01-01T00:00:00Z", data)
            zi = zipfile.ZipInfo(info.filename, date_time=(2024, 1, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = info.external_attr
            dst.writestr(zi, data)
    return buf.getvalue()
