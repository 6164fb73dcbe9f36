"""Drives a running deskenv-agent the way OSWorld's PythonController and
SetupController do (same routes, same request encodings: JSON bodies with
an explicit content type, form fields for /file, multipart for
/setup/upload), and checks OSWorld's response shapes.

Needs DESKENV_AGENT_URL (scripts/test.sh starts a desktop and an agent).
Only `requests` and the standard library.
"""

import json
import os
import struct
import tempfile
import time
import unittest
import uuid
import xml.etree.ElementTree as ET

import requests

BASE = os.environ.get("DESKENV_AGENT_URL", "http://127.0.0.1:5000")
JSON = {"Content-Type": "application/json"}
NS_STATE = "https://accessibility.ubuntu.example.org/ns/state"


def png_size(data: bytes):
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def execute(command, shell=False, timeout=120):
    payload = json.dumps({"command": command, "shell": shell})
    return requests.post(BASE + "/execute", headers=JSON, data=payload, timeout=timeout)


def pyautogui(code):
    # OSWorld's PythonController.execute_python_command wrapper, verbatim shape.
    prefix = "import pyautogui; import time; pyautogui.FAILSAFE = False; "
    return execute(["python", "-c", prefix + code])


class OSWorldRoutes(unittest.TestCase):
    def test_screenshot_is_a_full_hd_png(self):
        r = requests.get(BASE + "/screenshot", timeout=10)
        self.assertEqual(r.status_code, 200)
        self.assertEqual(r.headers["Content-Type"], "image/png")
        self.assertEqual(png_size(r.content), (1920, 1080))

    def test_accessibility_is_osworld_xml(self):
        r = requests.get(BASE + "/accessibility", timeout=60)
        self.assertEqual(r.status_code, 200)
        root = ET.fromstring(r.json()["AT"])
        self.assertEqual(root.tag, "desktop-frame")

    def test_screen_size_platform_cursor(self):
        r = requests.post(BASE + "/screen_size", timeout=10)
        self.assertEqual(r.json(), {"width": 1920, "height": 1080})
        self.assertEqual(requests.get(BASE + "/platform", timeout=10).text, "Linux")
        r = pyautogui("pyautogui.moveTo(321, 234)")
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(r.json()["status"], "success")
        self.assertEqual(requests.get(BASE + "/cursor_position", timeout=10).json(), [321, 234])

    def test_execute_shell_and_argv(self):
        r = execute("echo hello; echo oops >&2; exit 3", shell=True)
        body = r.json()
        self.assertEqual(body["status"], "success")
        self.assertEqual(body["output"], "hello\n")
        self.assertEqual(body["error"], "oops\n")
        self.assertEqual(body["returncode"], 3)
        r = execute("printf '%s|' 'a b' c")
        self.assertEqual(r.json()["output"], "a b|c|")
        r = requests.post(BASE + "/setup/execute", headers=JSON, data=json.dumps({"command": ["true"]}), timeout=10)
        self.assertEqual(r.json()["returncode"], 0)

    def test_upload_then_file_round_trip(self):
        path = "/tmp/deskenv-pytest-%s/sub/data.bin" % uuid.uuid4().hex
        data = os.urandom(300_000)
        form = {"file_path": path}
        files = {"file_data": ("data.bin", data)}
        r = requests.post(BASE + "/setup/upload", data=form, files=files, timeout=30)
        self.assertEqual(r.status_code, 200, r.text)
        r = requests.post(BASE + "/file", data={"file_path": path}, timeout=30)
        self.assertEqual(r.status_code, 200)
        self.assertEqual(r.content, data)
        r = requests.post(BASE + "/list_directory", headers=JSON, data=json.dumps({"path": os.path.dirname(os.path.dirname(path))}), timeout=10)
        tree = r.json()["directory_tree"]
        self.assertEqual(tree["type"], "directory")
        self.assertEqual(tree["children"][0]["name"], "sub")
        self.assertEqual(tree["children"][0]["children"][0], {"type": "file", "name": "data.bin"})

    def test_missing_file_is_404_json(self):
        r = requests.post(BASE + "/file", data={"file_path": "/nonexistent/x.txt"}, timeout=10)
        self.assertEqual(r.status_code, 404)
        self.assertEqual(r.json()["error"], "File not found")
        r = requests.post(BASE + "/file", data={}, timeout=10)
        self.assertEqual(r.status_code, 400)

    def test_launch_activate_close_window(self):
        d = tempfile.mkdtemp(prefix="deskenv-py-")
        name = "notes-%s.txt" % uuid.uuid4().hex[:6]
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write("hello\n")
        r = requests.post(BASE + "/setup/launch", headers=JSON, data=json.dumps({"command": ["mousepad", path]}), timeout=10)
        self.assertEqual(r.status_code, 200, r.text)
        deadline = time.time() + 30
        while True:
            r = requests.post(BASE + "/setup/activate_window", headers=JSON, data=json.dumps({"window_name": name}), timeout=10)
            if r.status_code == 200 or time.time() > deadline:
                break
            time.sleep(0.2)
        self.assertEqual(r.status_code, 200, r.text)
        r = requests.post(BASE + "/setup/close_window", headers=JSON, data=json.dumps({"window_name": name}), timeout=10)
        self.assertEqual(r.status_code, 200, r.text)
        r = requests.post(BASE + "/setup/activate_window", headers=JSON, data=json.dumps({"window_name": "no-such-window-xyz"}), timeout=10)
        self.assertEqual(r.status_code, 404)

    def test_run_python_and_bash(self):
        r = requests.post(BASE + "/run_python", headers=JSON, data=json.dumps({"code": "print(6*7)"}), timeout=90)
        body = r.json()
        self.assertEqual(body["status"], "success")
        self.assertEqual(body["output"], "42\n")
        self.assertEqual(body["return_code"], 0)
        r = requests.post(BASE + "/run_bash_script", headers=JSON, data=json.dumps({"script": "echo out; echo err >&2; exit 2", "timeout": 10}), timeout=30)
        body = r.json()
        self.assertEqual(body["status"], "error")
        self.assertEqual(body["returncode"], 2)
        self.assertIn("out", body["output"])
        self.assertIn("err", body["output"])

    def test_recording_round_trip(self):
        r = requests.post(BASE + "/start_recording", timeout=30)
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(r.json()["status"], "success")
        time.sleep(1.5)
        r = requests.post(BASE + "/end_recording", timeout=30)
        self.assertEqual(r.status_code, 200, r.text[:200])
        self.assertEqual(r.content[4:8], b"ftyp")
        r = requests.post(BASE + "/end_recording", timeout=30)
        self.assertEqual(r.status_code, 400)

    def test_bad_input_gets_clear_errors(self):
        r = requests.post(BASE + "/execute", headers=JSON, data="not json", timeout=10)
        self.assertEqual(r.status_code, 400)
        self.assertEqual(r.json()["status"], "error")
        r = requests.post(BASE + "/execute", headers=JSON, data=json.dumps({"command": ["no-such-program-xyz"]}), timeout=10)
        self.assertEqual(r.status_code, 500)
        self.assertIn("no-such-program-xyz", r.json()["message"])
        # The server keeps serving after bad input.
        self.assertEqual(requests.get(BASE + "/platform", timeout=10).status_code, 200)


if __name__ == "__main__":
    unittest.main()
