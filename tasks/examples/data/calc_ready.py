"""Exits 0 once LibreOffice Calc shows the document TITLE fully built, else 1.

The window and its title come seconds before the rest of the UI under a slow
guest; Calc fills in its status bar ("Sheet 1 of 1") after the toolbars, the
formula bar and the Name Box, once the view is ready for input. So: the
soffice application's frame named TITLE, its root pane's status bar, and the
status bar's first field reading "Sheet N of M". Walks the AT-SPI tree along
that path only (the grid alone has thousands of nodes).

With CELL, also the Name Box must read CELL: the setup sends a key (say
Right) and waits for its effect, because Calc's first keyboard input after
loading is handled late, and out of order with text typed right after it.

    python3 calc_ready.py "budget.xlsx - LibreOffice Calc" [CELL]
"""
import re
import sys

import pyatspi

SHEET = re.compile(r"^Sheet \d+ of \d+")
SKIP = {"menu bar", "tool bar", "scroll pane", "split pane", "document spreadsheet", "table"}


def text_of(node):
    try:
        t = node.queryText()
        return t.getText(0, t.characterCount)
    except Exception:
        return node.name or ""


def status_field(node, depth=0):
    """The status bar's first field under node, or None."""
    if depth > 8:
        return None
    try:
        role = node.getRoleName()
        children = [node.getChildAtIndex(i) for i in range(node.childCount)]
    except Exception:
        return None
    if role == "status bar":
        return text_of(children[0]) if children else ""
    if role in SKIP:
        return None
    for c in children:
        got = status_field(c, depth + 1)
        if got is not None:
            return got
    return None


def name_box(node, depth=0, inside=False):
    """The Name Box's text: the first text field of the Formula Tool Bar."""
    if depth > 30:
        return None
    try:
        role = node.getRoleName()
        name = node.name or ""
        children = [node.getChildAtIndex(i) for i in range(node.childCount)]
    except Exception:
        return None
    if inside and role == "text":
        return text_of(node)
    if role == "tool bar":
        if name != "Formula Tool Bar":
            return None
        inside = True
    elif role in SKIP:
        return None
    for c in children:
        got = name_box(c, depth + 1, inside)
        if got is not None:
            return got
    return None


def main():
    title = sys.argv[1]
    cell = sys.argv[2] if len(sys.argv) > 2 else None
    seen = "no soffice application on the AT-SPI bus"
    for app in pyatspi.Registry.getDesktop(0):
        try:
            if app is None or (app.name or "") != "soffice":
                continue
            frames = [app.getChildAtIndex(i) for i in range(app.childCount)]
        except Exception:
            continue
        seen = f"no frame named {title!r}"
        for f in frames:
            if f is None or (f.name or "") != title:
                continue
            field = status_field(f)
            if field is None or not SHEET.match(field):
                seen = f"frame {title!r}: status bar not filled in yet ({field!r})"
                continue
            box = name_box(f) if cell else None
            if cell and box != cell:
                seen = f"frame {title!r}: the Name Box reads {box!r}, not {cell!r} yet"
                continue
            print(field, box or "")
            return 0
    print(seen, file=sys.stderr)
    return 1


sys.exit(main())
