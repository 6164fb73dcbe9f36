//! Tests of the pyautogui-code parser over realistic agent outputs, its
//! errors, and properties: no input panics, generated calls parse as built.

use proptest::prelude::*;
use protocol::pyautogui::{parse, PyautoguiError};
use protocol::{Action, Button};

fn ok(code: &str) -> Vec<Action> {
    match parse(code) {
        Ok(actions) => actions,
        Err(e) => panic!("{code:?} failed: {e}"),
    }
}

fn err(code: &str) -> PyautoguiError {
    match parse(code) {
        Ok(actions) => panic!("{code:?} parsed to {actions:?}"),
        Err(e) => e,
    }
}

fn click_at(x: f64, y: f64) -> Action {
    Action::Click {
        button: Button::Left,
        x: Some(x),
        y: Some(y),
        num_clicks: 1,
    }
}

fn typing(text: &str) -> Action {
    Action::Typing {
        text: text.into(),
        interval: None,
    }
}

fn press(key: &str) -> Action {
    Action::Press {
        key: key.into(),
        presses: 1,
        interval: None,
    }
}

fn hotkey(keys: &[&str]) -> Action {
    Action::Hotkey {
        keys: keys.iter().map(|k| k.to_string()).collect(),
    }
}

fn wait(seconds: f64) -> Action {
    Action::Wait {
        seconds: Some(seconds),
    }
}

// ------------------------------------------------------------ agent code

#[test]
fn osworld_style_block() {
    let code = "import pyautogui\nimport time\npyautogui.click(100, 200)\ntime.sleep(0.5)\n\
                pyautogui.write('hello\\nworld', interval=0.05); pyautogui.press('enter')\n\
                pyautogui.hotkey('ctrl', 's')\n";
    assert_eq!(
        ok(code),
        vec![
            click_at(100.0, 200.0),
            wait(0.5),
            Action::Typing {
                text: "hello\nworld".into(),
                interval: Some(0.05)
            },
            press("enter"),
            hotkey(&["ctrl", "s"]),
        ]
    );
}

#[test]
fn empty_and_comment_only_code_has_no_actions() {
    assert_eq!(ok(""), vec![]);
    assert_eq!(ok("\n\n   \n"), vec![]);
    assert_eq!(ok("# just a comment\n   # another"), vec![]);
    assert_eq!(
        ok("import pyautogui, time\nfrom time import sleep\npass"),
        vec![]
    );
    assert_eq!(
        ok("pyautogui.FAILSAFE = False\npyautogui.PAUSE = 0.1"),
        vec![]
    );
    assert_eq!(ok("\"\"\"Open the file menu.\"\"\"\n"), vec![]);
    assert_eq!(ok("\u{feff}import pyautogui\r\n"), vec![]);
}

#[test]
fn osworld_prelude_and_special_tokens() {
    let code = "import pyautogui; import time; pyautogui.FAILSAFE = False; pyautogui.click(1, 2)";
    assert_eq!(ok(code), vec![click_at(1.0, 2.0)]);
    assert_eq!(ok("WAIT"), vec![Action::Wait { seconds: None }]);
    assert_eq!(ok("DONE\n"), vec![Action::Done]);
    assert_eq!(ok("  FAIL  # give up"), vec![Action::Fail]);
    assert_eq!(
        ok("pyautogui.press('enter'); DONE"),
        vec![press("enter"), Action::Done]
    );
}

#[test]
fn click_variants() {
    assert_eq!(
        ok("pyautogui.click(x=100, y=200)"),
        vec![click_at(100.0, 200.0)]
    );
    assert_eq!(
        ok("pyautogui.click((100, 200))"),
        vec![click_at(100.0, 200.0)]
    );
    assert_eq!(
        ok("pyautogui.click([100.5, 200.25])"),
        vec![click_at(100.5, 200.25)]
    );
    assert_eq!(ok("pyautogui.click(x=(3, 4))"), vec![click_at(3.0, 4.0)]);
    // A (left, top, width, height) box clicks its centre, as pyautogui does.
    assert_eq!(
        ok("pyautogui.click((10, 20, 31, 40))"),
        vec![click_at(25.0, 40.0)]
    );
    assert_eq!(
        ok("pyautogui.click()"),
        vec![Action::Click {
            button: Button::Left,
            x: None,
            y: None,
            num_clicks: 1
        }]
    );
    assert_eq!(
        ok("pyautogui.click(500, 300, clicks=2, interval=0.1, button='right', duration=0.5, tween=pyautogui.easeInQuad)"),
        vec![Action::Click {
            button: Button::Right,
            x: Some(500.0),
            y: Some(300.0),
            num_clicks: 2
        }]
    );
    // Positionally, as pyautogui orders them: x, y, clicks, interval, button.
    assert_eq!(
        ok("pyautogui.click(1, 2, 3, 0.0, 'middle')"),
        vec![Action::Click {
            button: Button::Middle,
            x: Some(1.0),
            y: Some(2.0),
            num_clicks: 3
        }]
    );
    assert_eq!(
        ok("pyautogui.click(button=pyautogui.RIGHT)"),
        vec![Action::Click {
            button: Button::Right,
            x: None,
            y: None,
            num_clicks: 1
        }]
    );
    assert_eq!(
        ok("pyautogui.click(-10, -20.5)"),
        vec![click_at(-10.0, -20.5)]
    );
    assert_eq!(ok("pyautogui.click(1e3, .5)"), vec![click_at(1000.0, 0.5)]);
    assert_eq!(
        ok("pyautogui.click(5, 6, clicks=0)"),
        vec![Action::MoveTo { x: 5.0, y: 6.0 }]
    );
    assert_eq!(ok("pyautogui.click(x=None, y=None, clicks=1)").len(), 1);
    assert_eq!(ok("pyautogui.leftClick(7, 8)"), vec![click_at(7.0, 8.0)]);
    assert_eq!(
        ok("pyautogui.rightClick(7, 8)"),
        vec![Action::RightClick {
            x: Some(7.0),
            y: Some(8.0)
        }]
    );
    assert_eq!(
        ok("pyautogui.middleClick(7, 8)"),
        vec![Action::Click {
            button: Button::Middle,
            x: Some(7.0),
            y: Some(8.0),
            num_clicks: 1
        }]
    );
    assert_eq!(
        ok("pyautogui.doubleClick(7, 8)"),
        vec![Action::DoubleClick {
            x: Some(7.0),
            y: Some(8.0)
        }]
    );
    assert_eq!(
        ok("pyautogui.doubleClick(7, 8, 0.1, 'right')"),
        vec![Action::Click {
            button: Button::Right,
            x: Some(7.0),
            y: Some(8.0),
            num_clicks: 2
        }]
    );
    assert_eq!(
        ok("pyautogui.tripleClick(x=7, y=8)"),
        vec![Action::Click {
            button: Button::Left,
            x: Some(7.0),
            y: Some(8.0),
            num_clicks: 3
        }]
    );
}

#[test]
fn mouse_motion() {
    assert_eq!(
        ok("pyautogui.moveTo(100, 200, duration=0.5, tween=pyautogui.easeInQuad)"),
        vec![Action::MoveTo { x: 100.0, y: 200.0 }]
    );
    assert_eq!(
        ok("pyautogui.moveTo((1.5, 2.5), duration=1)"),
        vec![Action::MoveTo { x: 1.5, y: 2.5 }]
    );
    assert_eq!(ok("pyautogui.moveTo()"), vec![]);
    assert_eq!(
        ok("pyautogui.dragTo(300, 400, 1.0, button='left')"),
        vec![Action::DragTo {
            x: 300.0,
            y: 400.0,
            button: Button::Left
        }]
    );
    assert_eq!(
        ok("pyautogui.dragTo(300, 400, duration=2, button='right')"),
        vec![Action::DragTo {
            x: 300.0,
            y: 400.0,
            button: Button::Right
        }]
    );
    assert_eq!(
        ok("pyautogui.dragTo(3, 4, mouseDownUp=False)"),
        vec![Action::MoveTo { x: 3.0, y: 4.0 }]
    );
    assert_eq!(
        ok("pyautogui.mouseDown(10, 20); pyautogui.moveTo(30, 40); pyautogui.mouseUp(button='left')"),
        vec![
            Action::MoveTo { x: 10.0, y: 20.0 },
            Action::MouseDown { button: Button::Left },
            Action::MoveTo { x: 30.0, y: 40.0 },
            Action::MouseUp { button: Button::Left },
        ]
    );
    assert_eq!(
        ok("pyautogui.mouseDown(button='right')"),
        vec![Action::MouseDown {
            button: Button::Right
        }]
    );
}

#[test]
fn scrolling() {
    let scroll = |dx, dy, x, y| Action::Scroll { dx, dy, x, y };
    assert_eq!(ok("pyautogui.scroll(-5)"), vec![scroll(0, -5, None, None)]);
    assert_eq!(
        ok("pyautogui.scroll(10, x=500, y=400)"),
        vec![scroll(0, 10, Some(500.0), Some(400.0))]
    );
    assert_eq!(
        ok("pyautogui.scroll(3, 1, 2)"),
        vec![scroll(0, 3, Some(1.0), Some(2.0))]
    );
    assert_eq!(
        ok("pyautogui.vscroll(clicks=-2)"),
        vec![scroll(0, -2, None, None)]
    );
    assert_eq!(
        ok("pyautogui.hscroll(4, 10, 20)"),
        vec![scroll(4, 0, Some(10.0), Some(20.0))]
    );
    assert_eq!(
        ok("pyautogui.scroll(-3.0)"),
        vec![scroll(0, -3, None, None)]
    );
}

#[test]
fn typing_and_keys() {
    assert_eq!(ok("pyautogui.typewrite('abc')"), vec![typing("abc")]);
    assert_eq!(
        ok("pyautogui.typewrite('abc', 0.25)"),
        vec![Action::Typing {
            text: "abc".into(),
            interval: Some(0.25)
        }]
    );
    assert_eq!(ok("pyautogui.write(message='x')"), vec![typing("x")]);
    assert_eq!(ok("pyautogui.write('')"), vec![]);
    // A list means key names, one press each.
    assert_eq!(
        ok("pyautogui.typewrite(['a', 'b', 'enter'])"),
        vec![press("a"), press("b"), press("enter")]
    );
    assert_eq!(
        ok("pyautogui.write(['left', 'left'], interval=0.1)"),
        vec![press("left"), wait(0.1), press("left")]
    );
    assert_eq!(
        ok("pyautogui.press('tab', presses=3, interval=0.2)"),
        vec![Action::Press {
            key: "tab".into(),
            presses: 3,
            interval: Some(0.2)
        }]
    );
    assert_eq!(
        ok("pyautogui.press(['down', 'down', 'enter'])"),
        vec![press("down"), press("down"), press("enter")]
    );
    // press(list, presses) repeats the whole list, as pyautogui does.
    assert_eq!(
        ok("pyautogui.press(['a', 'b'], 2, 0.5)"),
        vec![press("a"), press("b"), wait(0.5), press("a"), press("b")]
    );
    assert_eq!(ok("pyautogui.press(('esc',))"), vec![press("esc")]);
    assert_eq!(ok("pyautogui.press('a', presses=0)"), vec![]);
    assert_eq!(ok("pyautogui.press([])"), vec![]);
    // Key names pass through unchanged.
    assert_eq!(ok("pyautogui.press('Enter')"), vec![press("Enter")]);
    assert_eq!(
        ok("pyautogui.hotkey('ctrl', 'shift', 't')"),
        vec![hotkey(&["ctrl", "shift", "t"])]
    );
    assert_eq!(
        ok("pyautogui.hotkey(['ctrl', 'c'])"),
        vec![hotkey(&["ctrl", "c"])]
    );
    assert_eq!(
        ok("pyautogui.hotkey('alt', 'f4', interval=0.1)"),
        vec![hotkey(&["alt", "f4"])]
    );
    assert_eq!(
        ok("pyautogui.keyDown('shift'); pyautogui.press('a'); pyautogui.keyUp(key='shift')"),
        vec![
            Action::KeyDown {
                key: "shift".into()
            },
            press("a"),
            Action::KeyUp {
                key: "shift".into()
            },
        ]
    );
}

#[test]
fn sleeping() {
    assert_eq!(ok("time.sleep(2)"), vec![wait(2.0)]);
    assert_eq!(ok("from time import sleep\nsleep(1)"), vec![wait(1.0)]);
    assert_eq!(
        ok("from time import sleep as nap\nnap(0.3)"),
        vec![wait(0.3)]
    );
    assert_eq!(ok("pyautogui.sleep(0.5)"), vec![wait(0.5)]);
    assert_eq!(ok("import time as t\nt.sleep(1.5)"), vec![wait(1.5)]);
}

#[test]
fn imports_and_aliases() {
    assert_eq!(
        ok("import pyautogui as pg\npg.click(1, 2)"),
        vec![click_at(1.0, 2.0)]
    );
    assert_eq!(
        ok("from pyautogui import click, press as p\nclick(1, 2)\np('a')"),
        vec![click_at(1.0, 2.0), press("a")]
    );
    assert_eq!(
        ok("from pyautogui import (\n    click,\n    hotkey,\n)\nhotkey('ctrl', 'a')"),
        vec![hotkey(&["ctrl", "a"])]
    );
    assert_eq!(
        ok("from pyautogui import *\nmoveTo(1, 2)"),
        vec![Action::MoveTo { x: 1.0, y: 2.0 }]
    );
    // Without an import a bare name is not pyautogui's.
    assert_eq!(err("click(1, 2)").unsupported_call(), Some("click"));
    assert_eq!(err("sleep(1)").unsupported_call(), Some("sleep"));
    // An unsupported function reached through an alias is named canonically.
    assert_eq!(
        err("import pyautogui as pg\npg.moveRel(1, 2)").unsupported_call(),
        Some("pyautogui.moveRel")
    );
}

#[test]
fn statements_spanning_lines_and_separators() {
    let code = "pyautogui.click(\n    x=100,\n    y=200,   # the OK button\n)\npyautogui.press('enter');\n";
    assert_eq!(ok(code), vec![click_at(100.0, 200.0), press("enter")]);
    let code = "pyautogui.click(1,\n\n  2); pyautogui.click(3, 4) ;pyautogui.click(5, 6)";
    assert_eq!(
        ok(code),
        vec![click_at(1.0, 2.0), click_at(3.0, 4.0), click_at(5.0, 6.0)]
    );
    assert_eq!(ok("pyautogui.click(1, \\\n 2)"), vec![click_at(1.0, 2.0)]);
    assert_eq!(ok("pyautogui.click \\\n (1, 2)"), vec![click_at(1.0, 2.0)]);
    assert_eq!(
        ok("pyautogui.click(1,2)\r\npyautogui.click(3,4)\r\n"),
        vec![click_at(1.0, 2.0), click_at(3.0, 4.0)]
    );
    assert_eq!(
        ok("pyautogui . click ( 1 , 2 , )"),
        vec![click_at(1.0, 2.0)]
    );
    // Indented code is accepted as is.
    assert_eq!(
        ok("    pyautogui.click(1, 2)\n        pyautogui.press('a')"),
        vec![click_at(1.0, 2.0), press("a")]
    );
}

#[test]
fn strings_with_separators_comments_and_quotes() {
    assert_eq!(
        ok("pyautogui.write('a; b # c) d'); pyautogui.press('enter')  # done"),
        vec![typing("a; b # c) d"), press("enter")]
    );
    assert_eq!(
        ok(r#"pyautogui.write("it's \"quoted\"")"#),
        vec![typing("it's \"quoted\"")]
    );
    assert_eq!(ok(r#"pyautogui.write('it\'s')"#), vec![typing("it's")]);
    assert_eq!(
        ok(r"pyautogui.write('C:\\Users\\me')"),
        vec![typing(r"C:\Users\me")]
    );
    assert_eq!(
        ok(r"pyautogui.write(r'C:\Users\me')"),
        vec![typing(r"C:\Users\me")]
    );
    assert_eq!(
        ok(r"pyautogui.write('tab\there\r\n')"),
        vec![typing("tab\there\r\n")]
    );
    assert_eq!(
        ok(r"pyautogui.write('\x41\u00e9\U0001F600')"),
        vec![typing("Aé😀")]
    );
    assert_eq!(
        ok("pyautogui.write(u'héllo wörld ✓ 数据')"),
        vec![typing("héllo wörld ✓ 数据")]
    );
    assert_eq!(
        ok("pyautogui.write('héllo wörld ✓ 数据 😀')"),
        vec![typing("héllo wörld ✓ 数据 😀")]
    );
    assert_eq!(ok("pyautogui.write(B'bytes')"), vec![typing("bytes")]);
    assert_eq!(
        ok("pyautogui.write(f'no fields {{here}}')"),
        vec![typing("no fields {here}")]
    );
    // Adjacent literals concatenate, across lines inside the brackets too.
    assert_eq!(
        ok("pyautogui.write('ab' \"cd\"\n  '''ef''')"),
        vec![typing("abcdef")]
    );
}

#[test]
fn triple_quoted_multiline_strings() {
    let code =
        "pyautogui.write('''def f():\n    return 'x' # not a comment\n''')\npyautogui.press('esc')";
    assert_eq!(
        ok(code),
        vec![
            typing("def f():\n    return 'x' # not a comment\n"),
            press("esc")
        ]
    );
    let code = "pyautogui.write(\"\"\"line 1\nline \"2\"\n\"\"\", interval=0.01)";
    assert_eq!(
        ok(code),
        vec![Action::Typing {
            text: "line 1\nline \"2\"\n".into(),
            interval: Some(0.01)
        }]
    );
    // Errors after a multi-line string report the right line.
    let e = err("pyautogui.write('''a\nb\nc''')\npyautogui.moveRel(1, 2)");
    assert_eq!(e.line(), 4, "{e}");
}

// ------------------------------------------------------------ errors

#[test]
fn unsupported_calls_are_named() {
    for (code, call, line) in [
        ("pyautogui.moveRel(10, 0)", "pyautogui.moveRel", 1),
        (
            "import pyautogui\n\npyautogui.locateOnScreen('ok.png')",
            "pyautogui.locateOnScreen",
            3,
        ),
        ("pyautogui.screenshot()", "pyautogui.screenshot", 1),
        ("print('hi')", "print", 1),
        ("os.system('ls')", "os.system", 1),
        (
            "pyautogui.click(1, 2); pyautogui.drag(5, 5)",
            "pyautogui.drag",
            1,
        ),
        // A call nested in an argument is named too.
        (
            "pyautogui.click(pyautogui.locateCenterOnScreen('a.png'))",
            "pyautogui.locateCenterOnScreen",
            1,
        ),
        (
            "pyautogui.moveTo(\n  1,\n  pyautogui.size()\n)",
            "pyautogui.size",
            3,
        ),
    ] {
        let e = err(code);
        assert_eq!(e.unsupported_call(), Some(call), "{code}: {e}");
        assert!(e.is_outside_subset());
        assert_eq!(e.line(), line, "{code}: {e}");
        let msg = e.to_string();
        assert!(msg.starts_with(&format!("line {line}:")), "{msg}");
        assert!(msg.contains(call), "{msg}");
    }
}

#[test]
fn unsupported_constructs() {
    for (code, needle, line) in [
        ("x = 5\npyautogui.click(x, 10)", "`x`", 1),
        ("pyautogui.click(x, 10)", "variable `x`", 1),
        ("pyautogui.click(100+5, 10)", "`+`", 1),
        ("for i in range(3):\n    pyautogui.press('tab')", "`for`", 1),
        ("pyautogui.press('a')\nif True:\n    pass", "`if`", 2),
        ("def f():\n    pass", "`def`", 1),
        ("import os", "`os`", 1),
        ("from subprocess import run", "`subprocess`", 1),
        ("pyautogui.write(f'{name}')", "f-string", 1),
        ("pyautogui.write('\\N{BULLET}')", "\\N{", 1),
        ("pyautogui.click(*pos)", "`*`", 1),
        ("pyautogui.click({'x': 1})", "dict", 1),
        ("pyautogui.click(1, 2) + 1", "`+`", 1),
        ("pyautogui.write('a' * 3)", "`*`", 1),
        ("pyautogui.click(-'a')", "unary", 1),
        ("pyautogui.click(1 if True else 2, 3)", "`if`", 1),
        ("x, y = 1, 2", "`x`", 1),
        ("pyautogui", "bare name", 1),
        ("pyautogui.click(1j, 2)", "complex", 1),
    ] {
        let e = err(code);
        assert!(
            matches!(e, PyautoguiError::Unsupported { .. }),
            "{code}: {e:?}"
        );
        assert_eq!(e.unsupported_call(), None, "{code}");
        assert!(e.is_outside_subset());
        assert_eq!(e.line(), line, "{code}: {e}");
        assert!(e.to_string().contains(needle), "{code}: {e}");
    }
}

#[test]
fn syntax_errors_name_the_line() {
    for (code, needle, line) in [
        ("pyautogui.write('hello)", "unterminated string", 1),
        (
            "pyautogui.press('a')\npyautogui.write(\"abc\n\")",
            "unterminated string",
            2,
        ),
        (
            "pyautogui.write('''abc\n\n",
            "unterminated triple-quoted",
            1,
        ),
        ("pyautogui.click(1, 2", "`(` was never closed", 1),
        (
            "import time\npyautogui.click(1, [2, 3)",
            "does not match `[` opened on line 2",
            2,
        ),
        ("pyautogui.click(1, 2))", "unmatched `)`", 1),
        ("pyautogui.click(1 2)", "missing comma", 1),
        ("pyautogui.click(,)", "expected a value", 1),
        (
            "pyautogui.click(x=1, 2)",
            "positional argument follows keyword argument",
            1,
        ),
        ("pyautogui.click(x=1, x=2)", "repeated", 1),
        (
            "pyautogui.click(1, 2) pyautogui.click(3, 4)",
            "end of the statement",
            1,
        ),
        ("; pyautogui.click()", "`;`", 1),
        ("pyautogui.click();;", "`;`", 1),
        ("pyautogui.write(\u{201c}hi\u{201d})", "U+201C", 1),
        ("```python\npyautogui.click()\n```", "invalid character", 1),
        ("pyautogui.click(012, 3)", "leading zeros", 1),
        ("pyautogui.write('\\x4')", "\\xXX", 1),
        ("pyautogui.click(1, 2) \\ x", "continuation", 1),
    ] {
        let e = err(code);
        assert!(matches!(e, PyautoguiError::Syntax { .. }), "{code}: {e:?}");
        assert_eq!(e.unsupported_call(), None);
        assert!(!e.is_outside_subset());
        assert_eq!(e.line(), line, "{code}: {e}");
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!("line {line}: syntax error")),
            "{msg}"
        );
        assert!(msg.contains(needle), "{code}: {msg}");
    }
}

#[test]
fn argument_errors_name_call_argument_and_expectation() {
    for (code, argument, needle) in [
        ("pyautogui.click('100', 200)", "x", "must be a number"),
        ("pyautogui.click('button.png')", "x", "locating images"),
        ("pyautogui.click(100)", "y", "needs `y`"),
        ("pyautogui.click(y=100)", "x", "needs `x`"),
        ("pyautogui.click((1, 2), 3)", "y", "must not be given"),
        ("pyautogui.click((1, 2, 3))", "x", "(x, y) pair"),
        (
            "pyautogui.click(1, 2, clicks=1.5)",
            "clicks",
            "whole number from 0 to 100",
        ),
        (
            "pyautogui.click(1, 2, clicks=1000)",
            "clicks",
            "whole number",
        ),
        (
            "pyautogui.click(button='up')",
            "button",
            "'left', 'middle' or 'right'",
        ),
        (
            "pyautogui.click(1, 2, interval=-1)",
            "interval",
            "non-negative",
        ),
        ("pyautogui.click(1e999, 2)", "x", "finite"),
        (
            "pyautogui.click(1, 2, 1, 0, 'left', 0, None, None, True, 5)",
            "#10",
            "at most 9 positional",
        ),
        ("pyautogui.click(1, x=2)", "x", "multiple values"),
        (
            "pyautogui.scroll()",
            "clicks",
            "missing required argument `clicks`",
        ),
        ("pyautogui.scroll(1.5)", "clicks", "whole number"),
        ("pyautogui.scroll('down')", "clicks", "whole number"),
        ("pyautogui.write(42)", "message", "a string or a list"),
        ("pyautogui.write()", "message", "missing"),
        ("pyautogui.write(['a', 1])", "message", "key-name"),
        ("pyautogui.press(5)", "keys", "key-name"),
        (
            "pyautogui.press('a', presses='2')",
            "presses",
            "whole number",
        ),
        ("pyautogui.hotkey('ctrl', 3)", "keys", "key-name string"),
        ("pyautogui.hotkey()", "keys", "missing"),
        ("pyautogui.keyDown(None)", "key", "missing"),
        ("pyautogui.keyUp(['a'])", "key", "a string"),
        ("time.sleep('1')", "secs", "non-negative number of seconds"),
        ("time.sleep(-1)", "secs", "non-negative"),
        ("time.sleep()", "secs", "missing"),
        ("time.sleep(secs=1)", "secs", "no keyword arguments"),
        ("pyautogui.dragTo(button='left')", "x", "missing"),
        (
            "pyautogui.dragTo(1, 2, mouseDownUp='no')",
            "mouseDownUp",
            "True or False",
        ),
    ] {
        let e = err(code);
        match &e {
            PyautoguiError::Argument {
                line, argument: a, ..
            } => {
                assert_eq!(*line, 1, "{code}");
                assert_eq!(a, argument, "{code}: {e}");
            }
            other => panic!("{code}: expected an argument error, got {other:?}"),
        }
        assert_eq!(e.unsupported_call(), None);
        assert!(!e.is_outside_subset());
        let msg = e.to_string();
        let call = code.split('(').next().unwrap_or_default();
        assert!(msg.starts_with(&format!("line 1: {call}():")), "{msg}");
        assert!(msg.contains(needle), "{code}: {msg}");
    }
}

#[test]
fn argument_errors_point_at_the_argument_line() {
    let e = err("pyautogui.click(\n    100,\n    'abc',\n)");
    assert_eq!(e.line(), 3, "{e}");
    assert_eq!(
        e.to_string(),
        "line 3: pyautogui.click(): argument `y` must be a finite number, got \"abc\""
    );
}

#[test]
fn unknown_keyword_arguments() {
    let e = err("pyautogui.click(100, 200, clickz=2)");
    assert_eq!(
        e,
        PyautoguiError::UnknownArgument {
            line: 1,
            call: "pyautogui.click".into(),
            argument: "clickz".into(),
            expected: "x, y, clicks, interval, button, duration, tween, logScreenshot, _pause"
                .into(),
        }
    );
    assert!(
        e.to_string()
            .contains("unexpected keyword argument `clickz`"),
        "{e}"
    );
    assert_eq!(e.unsupported_call(), None);
    let e = err("pyautogui.hotkey('ctrl', 'c', presses=2)");
    assert!(
        matches!(e, PyautoguiError::UnknownArgument { ref argument, .. } if argument == "presses"),
        "{e:?}"
    );
    let e = err("pyautogui.write('a', delay=1)");
    assert!(e.to_string().contains("`delay`"), "{e}");
}

#[test]
fn first_error_wins_in_order() {
    // An argument error on line 1 is reported before an unsupported call on line 2.
    let e = err("pyautogui.click('a', 1)\npyautogui.moveRel(1, 1)");
    assert!(
        matches!(e, PyautoguiError::Argument { line: 1, .. }),
        "{e:?}"
    );
    // A syntax error anywhere is reported before everything else, as Python does.
    let e = err("pyautogui.moveRel(1, 1)\npyautogui.write('oops)");
    assert!(matches!(e, PyautoguiError::Syntax { line: 2, .. }), "{e:?}");
}

#[test]
fn deep_nesting_is_refused_without_overflow() {
    let deep = format!(
        "pyautogui.click({}1{})",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let e = err(&deep);
    assert!(e.to_string().contains("nested brackets"), "{e}");
    let unclosed = "[".repeat(1_000_000);
    assert!(parse(&unclosed).is_err());
    let minus = format!("pyautogui.scroll({}1)", "-".repeat(100_001));
    assert_eq!(
        ok(&minus),
        vec![Action::Scroll {
            dx: 0,
            dy: -1,
            x: None,
            y: None
        }]
    );
}

#[test]
fn large_inputs_are_linear() {
    let line = "pyautogui.write('some text; with # symbols'); pyautogui.press('enter')\n";
    let code = line.repeat(20_000);
    let t = std::time::Instant::now();
    assert_eq!(ok(&code).len(), 40_000);
    assert!(t.elapsed().as_secs() < 10, "{:?}", t.elapsed());
}

// ------------------------------------------------------------ properties

/// Fragments agents' code is made of, valid and broken.
const FRAGMENTS: &[&str] = &[
    "pyautogui",
    ".",
    "click",
    "write",
    "press",
    "hotkey",
    "scroll",
    "moveTo",
    "dragTo",
    "time",
    "sleep",
    "import",
    "from",
    "as",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    "=",
    ";",
    ":",
    "\n",
    " ",
    "\t",
    "#",
    "\\",
    "'",
    "\"",
    "'''",
    "\"\"\"",
    "r'",
    "b\"",
    "f'",
    "{x}",
    "1",
    "-2.5",
    "1e3",
    ".5",
    "0x1f",
    "012",
    "1j",
    "x",
    "y",
    "True",
    "None",
    "'a'",
    "\"b\"",
    "'\\n'",
    "'\\x4'",
    "'\\u00e9'",
    "'\\N{X}'",
    "interval",
    "button",
    "'left'",
    "WAIT",
    "DONE",
    "FAIL",
    "for",
    "if",
    "+",
    "*",
    "**",
    "数据",
    "✓",
    "\r",
    "\r\n",
    "\u{feff}",
    "“",
];

fn fragments() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..60).prop_map(|v| v.concat())
}

/// A Python literal for `text`, in one of several quoting styles.
fn py_literal(text: &str, style: u8) -> String {
    let escape = |quote: char, unicode_escapes: bool| {
        let mut out = String::new();
        for c in text.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if c == quote => {
                    out.push('\\');
                    out.push(c);
                }
                c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                    out.push_str(&format!("\\x{:02x}", c as u32))
                }
                c if unicode_escapes && !c.is_ascii() => {
                    if (c as u32) <= 0xffff {
                        out.push_str(&format!("\\u{:04x}", c as u32));
                    } else {
                        out.push_str(&format!("\\U{:08X}", c as u32));
                    }
                }
                c => out.push(c),
            }
        }
        out
    };
    match style % 5 {
        0 => format!("'{}'", escape('\'', false)),
        1 => format!("\"{}\"", escape('"', false)),
        2 => format!("'{}'", escape('\'', true)),
        // Triple quotes: escape every `"` so no run of three appears.
        3 => format!("\"\"\"{}\"\"\"", escape('"', false)),
        _ => {
            // Two adjacent literals, split at a character boundary.
            let chars: Vec<char> = text.chars().collect();
            let mid = chars.len() / 2;
            let (a, b): (String, String) =
                (chars[..mid].iter().collect(), chars[mid..].iter().collect());
            format!("{} {}", py_literal(&a, 0), py_literal(&b, 1))
        }
    }
}

fn coord() -> impl Strategy<Value = f64> {
    prop_oneof![
        (-5000i32..5000).prop_map(f64::from),
        (-1.0e4f64..1.0e4),
        Just(0.5),
        Just(-0.0),
    ]
}

fn button() -> impl Strategy<Value = (Button, &'static str)> {
    prop::sample::select(vec![
        (Button::Left, "'left'"),
        (Button::Right, "\"right\""),
        (Button::Middle, "'middle'"),
        (Button::Right, "pyautogui.RIGHT"),
    ])
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,8}",
        "[a-z0-9]",
        Just("enter".to_string()),
        Just("'".to_string()),
        Just("\\".to_string())
    ]
}

/// A valid call and the actions it should give.
fn call() -> impl Strategy<Value = (String, Vec<Action>)> {
    prop_oneof![
        (coord(), coord(), button(), 1u32..4, 0u8..3).prop_map(|(x, y, (b, lit), n, form)| {
            let code = match form {
                0 => format!("pyautogui.click({x}, {y}, {n}, 0.0, {lit})"),
                1 => format!("pyautogui.click(x={x}, y={y}, clicks={n}, button={lit})"),
                _ => format!("pyautogui.click(({x}, {y}), button={lit}, clicks={n}, tween=pyautogui.linear,)"),
            };
            let a = Action::Click {
                button: b,
                x: Some(x),
                y: Some(y),
                num_clicks: n,
            };
            (code, vec![a])
        }),
        (coord(), coord()).prop_map(|(x, y)| (format!("pyautogui.moveTo({x}, {y}, duration=0.2)"), vec![Action::MoveTo { x, y }])),
        (coord(), coord(), button()).prop_map(|(x, y, (b, lit))| {
            (format!("pyautogui.dragTo({x}, {y}, 0.5, button={lit})"), vec![Action::DragTo { x, y, button: b }])
        }),
        (-10_000i32..=10_000, prop::option::of((coord(), coord()))).prop_map(|(n, at)| match at {
            Some((x, y)) => (
                format!("pyautogui.scroll({n}, x={x}, y={y})"),
                vec![Action::Scroll {
                    dx: 0,
                    dy: n,
                    x: Some(x),
                    y: Some(y)
                }],
            ),
            None => (
                format!("pyautogui.hscroll({n})"),
                vec![Action::Scroll {
                    dx: n,
                    dy: 0,
                    x: None,
                    y: None
                }],
            ),
        }),
        (any::<String>(), any::<u8>(), prop::option::of(0.0f64..1.0)).prop_map(|(text, style, interval)| {
            let lit = py_literal(&text, style);
            let code = match interval {
                Some(i) => format!("pyautogui.write({lit}, interval={i})"),
                None => format!("pyautogui.typewrite({lit})"),
            };
            let actions = if text.is_empty() { vec![] } else { vec![Action::Typing { text, interval }] };
            (code, actions)
        }),
        (key(), 1u32..5, any::<u8>()).prop_map(|(k, n, style)| {
            let code = format!("pyautogui.press({}, presses={n})", py_literal(&k, style));
            (code, vec![Action::Press { key: k, presses: n, interval: None }])
        }),
        prop::collection::vec(key(), 1..5).prop_map(|keys| {
            let lits: Vec<String> = keys.iter().map(|k| py_literal(k, 1)).collect();
            (format!("pyautogui.hotkey({})", lits.join(", ")), vec![Action::Hotkey { keys }])
        }),
        (0.0f64..100.0).prop_map(|s| (format!("time.sleep({s})"), vec![Action::Wait { seconds: Some(s) }])),
        prop::sample::select(vec![
            ("WAIT", Action::Wait { seconds: None }),
            ("DONE", Action::Done),
            ("FAIL", Action::Fail),
        ])
        .prop_map(|(code, a)| (code.to_string(), vec![a])),
    ]
}

const SEPARATORS: &[&str] = &[
    "\n",
    "; ",
    ";\n",
    "\n\n# a comment; with 'quotes'\n",
    "  # trailing (\n",
    "\r\n",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings_never_panic(code in any::<String>()) {
        let _ = parse(&code);
    }

    #[test]
    fn arbitrary_ascii_never_panics(code in "[ -~\n\t\r]{0,200}") {
        let _ = parse(&code);
    }

    #[test]
    fn fragment_soup_never_panics(code in fragments()) {
        if let Err(e) = parse(&code) {
            // Every error names a line within the code.
            let lines = code.split(['\n', '\r']).count().max(1);
            prop_assert!(e.line() >= 1 && e.line() <= lines, "{e} for {code:?}");
            let prefix = format!("line {}:", e.line());
            prop_assert!(e.to_string().starts_with(&prefix), "{e}");
        }
    }

    #[test]
    fn generated_calls_parse_as_built(
        calls in prop::collection::vec(call(), 1..8),
        seps in prop::collection::vec(prop::sample::select(SEPARATORS), 8),
        prelude in any::<bool>(),
    ) {
        let mut code = String::new();
        if prelude {
            code.push_str("import pyautogui\nimport time\npyautogui.FAILSAFE = False\n");
        }
        let mut expected = Vec::new();
        for (i, (c, actions)) in calls.into_iter().enumerate() {
            code.push_str(&c);
            code.push_str(seps.get(i).copied().unwrap_or("\n"));
            expected.extend(actions);
        }
        match parse(&code) {
            Ok(actions) => prop_assert_eq!(actions, expected, "{}", code),
            Err(e) => prop_assert!(false, "{} failed: {}", code, e),
        }
    }

    #[test]
    fn string_literals_round_trip(text in any::<String>(), style in any::<u8>()) {
        let code = format!("pyautogui.write({})", py_literal(&text, style));
        let expected = if text.is_empty() { vec![] } else { vec![typing(&text)] };
        prop_assert_eq!(parse(&code), Ok(expected), "{}", code);
    }
}
