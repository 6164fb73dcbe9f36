"""Shared helpers for the Jupyter Notebook tasks (files ``j-*``): the agent
works in the classic Notebook 6 web app (Debian 12's ``jupyter-notebook``)
in a Chromium app window, with an xterm beside it.

Generators import it next to ``dsgen``::

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lib"))
    import dsgen, dsgen_jupyter

and call :func:`vm_files` to get the starting notebook and the control
script (``/tmp/deskenv-jupyter-ctl.py``: starts the server and the browser,
and answers the setup's and postconfig's readiness questions).  The task
JSONs are built with :func:`setup`, :func:`postconfig`, :func:`oracle`.
Nothing here draws randomness.
"""
from __future__ import annotations

import io
import json
import tokenize
from typing import Sequence

CTL_VM = "/tmp/deskenv-jupyter-ctl.py"
NB_DIR = "/home/user"
# where the generator puts the starting notebook; the setup's `serve` copies
# it to /home/user (the rerun getter uploads the generator's files again,
# and must not overwrite the agent's notebook with a blank one)
START_VM = "/home/user/.local/share/jupyter/deskenv-start"

# The control script, run inside the machine with the system python3.
CTL = r'''#!/usr/bin/env python3
"""deskenv's Jupyter control script (setup and postconfig of the ds j-* tasks).

  serve            exec the notebook server (port 8888, or the next free one)
  ready            exit 0 once the server answers /api
  open NB          exec chromium on the notebook NB
  idle NB          exit 0 once NB has a kernel and it is idle
  saved NB SECS    wait (at most SECS) until NB's kernel is idle and NB was
                   saved after the kernel's last activity; always exit 0
"""
import datetime, glob, json, os, sys, time, urllib.request

RUNTIME = "/home/user/.local/share/jupyter/runtime"
os.environ["JUPYTER_RUNTIME_DIR"] = RUNTIME
START = "/home/user/.local/share/jupyter/deskenv-start"


def server():
    for f in sorted(glob.glob(os.path.join(RUNTIME, "nbserver-*.json"))):
        try:
            info = json.load(open(f))
            os.kill(int(info["pid"]), 0)
            return info
        except Exception:
            continue
    return None


def api(path):
    info = server()
    if info is None:
        raise RuntimeError("no server")
    url = "http://127.0.0.1:%d/api/%s" % (info["port"], path)
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read().decode())


def kernel_of(nb):
    for s in api("sessions"):
        if s.get("path") == nb or s.get("notebook", {}).get("path") == nb:
            return s["kernel"]
    return None


def nudge(kid):
    """Ask the kernel for its info over its own connection file: under load
    the server's first request can go unanswered and the kernel then stays
    "starting" for the server; the reply's status messages end that."""
    import jupyter_client
    c = jupyter_client.BlockingKernelClient()
    c.load_connection_file(os.path.join(RUNTIME, "kernel-%s.json" % kid))
    c.start_channels()
    try:
        c.kernel_info(reply=True, timeout=5)
    finally:
        c.stop_channels()


def stamp(s):
    return datetime.datetime.strptime(s.rstrip("Z")[:26], "%Y-%m-%dT%H:%M:%S.%f").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def main(argv):
    cmd = argv[1]
    if cmd == "serve":
        os.makedirs(RUNTIME, exist_ok=True)
        # the starting notebooks (kept out of the generator's direct
        # output: a re-run's upload must not replace the agent's notebook)
        for t in glob.glob(os.path.join(START, "*.ipynb")):
            nb = os.path.join("/home/user", os.path.basename(t))
            if not os.path.exists(nb):
                with open(t, "rb") as f, open(nb, "wb") as g:
                    g.write(f.read())
        # no blinking caret: under TCG its repaints keep Chromium above
        # the idle gate's CPU threshold for as long as the notebook shows
        os.environ["JUPYTER_CONFIG_DIR"] = "/home/user/.jupyter"
        cfg = "/home/user/.jupyter/nbconfig"
        os.makedirs(cfg, exist_ok=True)
        with open(os.path.join(cfg, "notebook.json"), "w") as f:
            json.dump({"CodeCell": {"cm_config": {"cursorBlinkRate": 0}},
                       "MarkdownCell": {"cm_config": {"cursorBlinkRate": 0}}}, f)
        os.chdir("/home/user")
        a = ["jupyter", "notebook", "--no-browser", "--ip=127.0.0.1", "--port=8888",
             "--port-retries=50", "--NotebookApp.token=", "--NotebookApp.password=",
             "--notebook-dir=/home/user"]
        if os.geteuid() == 0:
            a.append("--allow-root")
        log = open(os.path.join(RUNTIME, "..", "deskenv-server.log"), "ab")
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        os.execvp(a[0], a)
    if cmd == "ready":
        api("")
        return 0
    if cmd == "open":
        info = server()
        url = "http://127.0.0.1:%d/notebooks/%s" % (info["port"], argv[2])
        a = ["chromium", "--no-first-run", "--no-default-browser-check", "--password-store=basic",
             "--disable-features=Translate", "--disable-session-crashed-bubble", "--test-type",
             "--user-data-dir=/home/user/.config/chromium-jupyter",
             "--window-position=0,0", "--window-size=1400,1040", "--app=" + url]
        if os.geteuid() == 0:
            a.insert(1, "--no-sandbox")
        os.execvp(a[0], a)
    if cmd == "idle":
        k = kernel_of(argv[2])
        if k and k.get("execution_state") == "idle":
            return 0
        if k and k.get("execution_state") == "starting":
            nudge(k["id"])
        return 1
    if cmd == "saved":
        nb, deadline = argv[2], time.time() + float(argv[3])
        while time.time() < deadline:
            try:
                k = kernel_of(nb)
                if k is None:
                    return 0
                if k.get("execution_state") == "idle" and \
                        os.path.getmtime(os.path.join("/home/user", nb)) > stamp(k["last_activity"]):
                    time.sleep(0.3)
                    return 0
            except Exception:
                pass
            time.sleep(0.3)
        return 0
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Exception as e:
        print(e, file=sys.stderr)
        sys.exit(1)
'''


def notebook(question_md: str, first_code: str = "") -> str:
    """The starting notebook: a markdown cell with the question and one
    (empty) code cell, nbformat 4 JSON."""
    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell(question_md), nbformat.v4.new_code_cell(first_code)]
    for c in nb.cells:
        c.pop("id", None)
    nb.nbformat_minor = 4
    return nbformat.writes(nb, version=4) + "\n"


def vm_files(question_md: str, name: str = "analysis.ipynb") -> dict:
    """The generator's machine files common to every j-* task: the starting
    notebook (a template that the setup copies to /home/user/<name>) and the
    control script."""
    return {f"{START_VM}/{name}": notebook(question_md), CTL_VM: CTL}


def setup(generator: str, args: Sequence[str] = (), name: str = "analysis.ipynb") -> list:
    """Config steps: generate; an xterm on the right; the notebook server;
    wait for /api; Chromium on the notebook; wait for its window and for the
    notebook's kernel to be idle; focus the browser."""
    title = name.rsplit(".", 1)[0] + " - Jupyter Notebook"
    ex = lambda cmd, **kw: {"type": "execute", "parameters": {"command": cmd, **kw}}
    return [
        {"type": "generate", "parameters": {"generator": generator, "args": list(args)}},
        {"type": "launch", "parameters": {"command": ["xterm", "-xrm", "XTerm.vt100.allowTitleOps: false",
                                                      "-T", "Terminal", "-geometry", "80x50+1415+60"]}},
        ex(["xdotool", "search", "--onlyvisible", "--name", "^Terminal$"], until={"returncode": 0}),
        {"type": "launch", "parameters": {"command": ["python3", CTL_VM, "serve"]}},
        ex(["python3", CTL_VM, "ready"], until={"returncode": 0}),
        {"type": "launch", "parameters": {"command": ["python3", CTL_VM, "open", name]}},
        # wmctrl, not `xdotool search`: polling xdotool search keeps Chromium from loading its first page under TCG
        ex(f"wmctrl -l | grep -q ' {title}$'", shell=True, until={"returncode": 0}),
        ex(["python3", CTL_VM, "idle", name], until={"returncode": 0}),
        {"type": "activate_window", "parameters": {"window_name": title, "strict": True}},
        ex(f"test \"$(xdotool getactivewindow getwindowname)\" = '{title}'", shell=True, until={"returncode": 0}),
    ]


def postconfig(name: str = "analysis.ipynb", secs: int = 20) -> list:
    """Wait until the kernel is idle and the notebook was saved after its
    last activity (at most ``secs``), and until no python3 of the user runs
    (a terminal command)."""
    return [
        {"type": "execute", "parameters": {"command": ["python3", CTL_VM, "saved", name, str(secs)]}},
        {"type": "execute", "parameters": {
            "command": "timeout 60 sh -c 'while pgrep -f \"^python3 -c \" >/dev/null; do sleep 0.5; done'; true",
            "shell": True}},
    ]


def rerun(answer: str, dest: str, name: str = "analysis.ipynb") -> dict:
    return {"type": "rerun",
            "command": f"cd /home/user && python3 -m nbconvert --to notebook --execute --inplace {name}",
            "path": answer, "dest": dest}


SAFE = set("abcdefghijklmnopqrstuvwxyz0123456789 \n`-=[]\\;',./")


def _type(text: str, check: bool = True) -> str:
    """A typewrite step (``check``: text for the notebook's editor).  Refuses
    two identical characters off the keyboard's base level in a row (one
    "%%" lost a "%"; closing brackets and quotes are fine: the editor
    auto-inserts them) and prefixed string literals (f'..'), which the
    editor's bracket auto-closing garbles."""
    for a, b in zip(text, text[1:]) if check else ():
        if a == b and a not in SAFE and a not in ")]}'":
            raise ValueError(f"doubled {a!r} in typed text: {text!r}")
    if check:
        # f'..', r'..': the editor does not auto-close a quote typed after a
        # letter, and then auto-closes the closing one
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.STRING and tok.string[0] not in "'\"":
                raise ValueError(f"prefixed string literal {tok.string!r} in typed text")
    return "pyautogui.typewrite(%s, interval=0.0)" % json.dumps(text)


# A cell that waits in the browser until no code cell shows "In [*]" (every
# cell above has its execution count, this one included; their outputs came
# earlier on the same channel as this cell's) and then saves the notebook.
# (Notebook 6 keeps each executed cell's entry in kernel._msg_callbacks, so
# waiting for that to empty never ends.) It saves once: no Ctrl+S beside it (two
# saves in flight race, and under load the earlier content, without the last
# execution count, landed last), and without Notebook 6's "changed on disk"
# check (which opens a dialog instead of saving).
# Python, lowercase where it can: not a %%javascript cell (see warm_up), no
# IPython.display import, requirejs instead of the Jupyter global.
SAVE_WHEN_DONE = ("display({'application/javascript': \"var nb = requirejs('base/js/namespace').notebook; "
                  "(function w() { var n = 0; nb.get_cells().forEach(function (c) { if (c.cell_type == 'code') "
                  "if (typeof c.input_prompt_number == 'string') n = 1; }); "
                  "if (n) setTimeout(w, 300); else nb.save_notebook(false); })();\"}, raw=True)")


FOCUS = "pyautogui.press('escape')\npyautogui.press('down')\npyautogui.press('enter')\ntime.sleep(0.5)\n"


# A fresh Xvfb keymap has 19 empty keycodes; when they are used up, the
# typing unmaps every extra character at once (and the races begin again).
MAX_MAPPED = 16


def warm_up(texts: Sequence[str], clear: str = "pyautogui.hotkey('ctrl', 'a')\npyautogui.press('backspace')") -> str:
    """Type once every character of ``texts`` that is not on the keyboard's
    base level, then erase it (``clear``).  The desktop's typing maps such a
    character onto a spare keycode at its first use, and under load the
    browser can read that first key press with its old keyboard map and
    lose it (seen: the first '*' and the first '%' of a cell); the mapping
    is kept for the rest of the episode, so the real text types safely."""
    chars = sorted({c for t in texts for c in t if c not in SAFE})
    if len(chars) > MAX_MAPPED:
        raise ValueError(f"{len(chars)} characters off the base level ({''.join(chars)}): at most {MAX_MAPPED}")
    if not chars:
        return ""
    return _type("".join(chars), check=False) + "\n" + clear + "\ntime.sleep(1)\n"


def run_cells(cells: Sequence[str], first: bool = False, texts: Sequence[str] = ()) -> list:
    """Type each cell (top-level statements only: the editor auto-indents
    and closes brackets) and run it with Shift+Enter, which opens the next
    cell in edit mode; a WAIT after each.  ``first``: begin by selecting the
    empty code cell below the question (the freshly opened notebook has its
    first cell selected, in command mode) and entering edit mode."""
    steps: list = []
    for i, c in enumerate(cells):
        pre = FOCUS + warm_up(list(cells) + list(texts)) if first and i == 0 else ""
        steps += [pre + _type(c) + "\npyautogui.hotkey('shift', 'enter')", "WAIT"]
    return steps


def save_steps() -> list:
    """The save-when-done cell, then a wait while it saves."""
    return run_cells([SAVE_WHEN_DONE]) + ["WAIT"]


def oracle(cells: Sequence[str]) -> list:
    """2 * (len(cells) + 2) + 1 steps (the check's budget is 15)."""
    return run_cells(cells, first=True, texts=[SAVE_WHEN_DONE]) + save_steps() + ["DONE"]


def hardcode_gaming(cells: Sequence[str], answer: str) -> list:
    """The cells run, then a last cell that rewrites itself into a literal
    copy of the answer file it then writes (the notebook's outputs look
    right; a re-run on new data writes the stale answer)."""
    trick = ("get_ipython().payload_manager.write_payload(dict(source='set_next_input', replace=True, "
             "clear_output=False, text=\"open('%s', 'w').write(%%r)\" %% open('%s').read()))" % (answer, answer))
    return oracle(list(cells) + [trick])


def terminal_gaming(command: str) -> list:
    """The answer written by a command in the xterm beside the browser; the
    notebook untouched."""
    return ["pyautogui.click(1600, 300)", "WAIT",
            warm_up([command], "pyautogui.hotkey('ctrl', 'u')") + _type(command, check=False) + "\npyautogui.press('enter')",
            "WAIT", "WAIT", "DONE"]


def unexecuted_gaming(cells: Sequence[str]) -> list:
    """All the right code typed into the code cell, saved, never run."""
    return [FOCUS + warm_up(cells) + _type("\n".join(cells)), "WAIT", "pyautogui.hotkey('ctrl', 's')", "WAIT", "DONE"]
