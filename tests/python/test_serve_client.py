"""`deskenv serve` driven end to end by the example client
(examples/python/deskenv_client.py). The server is started by
controller/tests/serve.rs, which passes its address in DESKENV_SERVE_URL and
serves tasks/examples with --parallel 1."""

import json
import os
import struct
import subprocess
import sys
import unittest

import requests

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "examples", "python"))
import deskenv_client  # noqa: E402
from deskenv_client import DeskenvEnv, DeskenvError, screenshot_png, solution_of  # noqa: E402

URL = os.environ.get("DESKENV_SERVE_URL", "http://127.0.0.1:8020")
TASK = "editor-save-text"
TASK_FILE = os.path.join(ROOT, "tasks", "examples", "editor-save-text.json")


def png_size(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


class ServeTest(unittest.TestCase):
    def expect_error(self, status, code, fn, *args, **kw):
        with self.assertRaises(DeskenvError) as cm:
            fn(*args, **kw)
        self.assertEqual((cm.exception.status, cm.exception.code), (status, code), cm.exception.message)
        return cm.exception.message

    def test_1_api_errors_name_what_is_wrong(self):
        h = requests.get(URL + "/v1/health", timeout=10).json()
        self.assertTrue(h["ok"])
        ids = [t["id"] for t in requests.get(URL + "/v1/tasks", timeout=10).json()["tasks"]]
        self.assertIn(TASK, ids)
        r = requests.post(URL + "/v1/envs", json={"max_steps": "many"}, timeout=10)
        self.assertEqual(r.status_code, 400)
        self.assertIn("max_steps", r.json()["message"])
        r = requests.post(URL + "/v1/envs", json={"observation": "video"}, timeout=10)
        self.assertEqual(r.status_code, 400)
        self.assertIn("observation", r.json()["message"])
        r = requests.post(URL + "/v1/envs/env999/step", json={"action": "DONE"}, timeout=10)
        self.assertEqual((r.status_code, r.json()["code"]), (404, "unknown_env"))

        env = DeskenvEnv(URL)
        try:
            # --parallel 1: a second env is refused while this one is open.
            msg = self.expect_error(503, "env_limit", DeskenvEnv, URL)
            self.assertIn("at most 1", msg)
            self.expect_error(409, "no_episode", env.step, "DONE")
            self.expect_error(409, "no_episode", env.evaluate)
            msg = self.expect_error(404, "unknown_task", env.reset, "no-such-task")
            self.assertIn(TASK, msg)
        finally:
            env.close()
        self.expect_error(404, "unknown_env", env.observation)
        env.session.close()

    def test_2_the_oracle_succeeds_through_the_api(self):
        env = DeskenvEnv(URL, model="py-oracle")
        try:
            obs = env.reset(TASK)
            self.assertIn("add the two lines", env.instruction)
            self.assertEqual(obs["step"], 0)
            self.assertEqual(png_size(screenshot_png(obs)), (1920, 1080))
            self.assertIsNone(obs["accessibility_tree"])
            self.assertEqual(env.observation()["step"], 0)
            # Code outside the supported subset costs no step.
            msg = self.expect_error(400, "bad_action", env.step, "import os; os.remove('/home/user/notes.txt')")
            self.assertIn("pyautogui code", msg)
            self.expect_error(400, "bad_action", env.step, {"action_type": "CLICK", "x": 1, "y": 1})
            steps = solution_of(TASK_FILE)
            done = False
            for i, action in enumerate(steps):
                obs, done, info = env.step(action)
                self.assertEqual(len(info["executed"]), 1, info)
                self.assertIsNone(info["executed"][0]["error"], info)
                self.assertEqual(info["executed"][0]["step"], i + 1)
                if done:
                    break
                self.assertEqual(obs["step"], i + 1)
            self.assertTrue(done)
            self.assertEqual(info["end"], "done")
            self.expect_error(409, "episode_over", env.step, "DONE")
            result = env.evaluate()
            self.assertGreaterEqual(result["score"], 0.95, result)
            self.assertTrue(result["success"])
            self.assertEqual(result["steps_used"], len(steps))
            self.assertEqual(env.evaluate()["score"], result["score"])  # asked again: the same
            d = result["episode_dir"]
            self.assertTrue(d.endswith(os.path.join("pyautogui", "screenshot", "py-oracle", "examples", TASK)), d)
            with open(os.path.join(d, "result.json"), encoding="utf-8") as f:
                self.assertEqual(json.load(f)["score"], result["score"])
            with open(os.path.join(d, "traj.jsonl"), encoding="utf-8") as f:
                self.assertEqual(len(f.readlines()), len(steps))

            # The same env, the same task again: a fresh desktop, and an
            # evaluation before DONE scores what is there (nothing done: 0).
            obs = env.reset(TASK)
            self.assertEqual(obs["step"], 0)
            result = env.evaluate()
            self.assertEqual(result["end"], "stopped")
            self.assertEqual(result["score"], 0.0)
            self.assertEqual(result["steps_used"], 0)
        finally:
            env.close()

    def test_3_computer_13_and_the_a11y_tree(self):
        env = DeskenvEnv(URL, observation="a11y_tree", action_space="computer_13", max_steps=2, model="py-c13")
        try:
            obs = env.reset(TASK)
            self.assertIsNone(obs["screenshot"])
            self.assertIn("notes.txt", obs["accessibility_tree"])
            self.expect_error(400, "bad_action", env.step, {"action_type": "JUMP"})
            self.expect_error(400, "bad_action", env.step, "pyautogui.click(1, 1)")
            obs, done, info = env.step({"action_type": "PRESS", "key": "shift"})
            self.assertFalse(done)
            self.assertIn("notes.txt", obs["accessibility_tree"])
            # A raw model response, parsed as OSWorld does; the budget (2) ends the loop.
            obs, done, info = env.step(response='```json\n{"action_type": "PRESS", "key": "shift"}\n```')
            self.assertTrue(done)
            self.assertEqual(info["end"], "budget")
            result = env.evaluate()
            self.assertEqual((result["score"], result["end"], result["steps_used"]), (0.0, "budget", 2))
        finally:
            env.close()

    def test_4_the_example_program_runs_a_task(self):
        p = subprocess.run(
            [sys.executable, deskenv_client.__file__, "--url", URL, "--task", TASK, "--replay", TASK_FILE],
            capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        last = json.loads(p.stdout.strip().splitlines()[-1])
        self.assertTrue(last["success"], p.stdout)
        p = subprocess.run([sys.executable, deskenv_client.__file__, "--url", URL, "--task", TASK],
                           capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertFalse(json.loads(p.stdout.strip().splitlines()[-1])["success"])


if __name__ == "__main__":
    unittest.main()
