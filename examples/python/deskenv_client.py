#!/usr/bin/env python3
"""A client for `deskenv serve` (controller/serve-openapi.yaml), using only
`requests`: the gym-like loop an agent in Python runs.

    env = DeskenvEnv("http://127.0.0.1:8020", observation="screenshot")
    obs = env.reset("editor-save-text")        # a fresh desktop, task set up
    while True:
        action = my_agent(env.instruction, obs)  # pyautogui code, WAIT, DONE, FAIL
        obs, done, info = env.step(action)
        if done:
            break
    result = env.evaluate()                     # {"score": 1.0, "success": true, ...}
    env.close()

As a program it runs one task with a stand-in agent: `--replay FILE`
replays the `solution` of a task file (the oracle), otherwise the agent
answers DONE at once (the negative control). It prints one line per step
and the result as JSON on its last line.

    python3 examples/python/deskenv_client.py --url http://127.0.0.1:8020 \
        --task editor-save-text --replay tasks/examples/editor-save-text.json
"""

import argparse
import base64
import json
import sys

import requests


class DeskenvError(Exception):
    """An error answer of the server: `status`, `code` and `message`."""

    def __init__(self, status, code, message):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class DeskenvEnv:
    """One env of a `deskenv serve` server (a seat for one episode at a time)."""

    def __init__(self, url, observation="screenshot", action_space="pyautogui",
                 max_steps=15, model="http", timeout=600):
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.session = requests.Session()
        try:
            created = self._call("POST", "/v1/envs", {
                "observation": observation, "action_space": action_space,
                "max_steps": max_steps, "model": model,
            })
        except Exception:
            self.session.close()
            raise
        self.env_id = created["env_id"]
        self.instruction = None
        self.episode_dir = None

    def _call(self, method, path, body=None):
        r = self.session.request(method, self.url + path, json=body, timeout=self.timeout)
        if r.status_code >= 400:
            try:
                e = r.json()
            except ValueError:
                e = {"code": "http", "message": r.text}
            raise DeskenvError(r.status_code, e.get("code"), e.get("message"))
        return r.json() if r.content else None

    def reset(self, task_id):
        """Starts `task_id` in a fresh desktop; returns the first observation."""
        r = self._call("POST", f"/v1/envs/{self.env_id}/reset", {"task_id": task_id})
        self.instruction = r["instruction"]
        self.episode_dir = r["episode_dir"]
        return r["observation"]

    def observation(self):
        return self._call("GET", f"/v1/envs/{self.env_id}/observation")

    def step(self, action=None, response=None):
        """One step: `action` (pyautogui code, WAIT, DONE, FAIL, a computer_13
        action dict, or a list) or `response` (a model's raw text). Returns
        (observation or None, done, info)."""
        body = {}
        if action is not None:
            body["action"] = action
        if response is not None:
            body["response"] = response
        r = self._call("POST", f"/v1/envs/{self.env_id}/step", body)
        return r["observation"], r["done"], r

    def evaluate(self):
        """Ends the loop if it still runs, then scores: result.json as a dict."""
        return self._call("POST", f"/v1/envs/{self.env_id}/evaluate")

    def close(self):
        try:
            self._call("DELETE", f"/v1/envs/{self.env_id}")
        finally:
            self.session.close()


def screenshot_png(obs):
    """The observation's screenshot as PNG bytes (None for a11y_tree)."""
    s = obs.get("screenshot")
    return base64.b64decode(s) if s else None


def solution_of(task_file):
    """A task file's `solution`, each entry as a step action, ending with DONE."""
    with open(task_file, encoding="utf-8") as f:
        steps = list(json.load(f).get("solution") or [])
    if not steps or steps[-1] not in ("DONE", "FAIL"):
        steps.append("DONE")
    return steps


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", default="http://127.0.0.1:8020")
    p.add_argument("--task", required=True, help="task id")
    p.add_argument("--replay", help="a task file whose solution to replay (else: DONE at once)")
    p.add_argument("--observation", default="screenshot")
    p.add_argument("--action-space", default="pyautogui")
    p.add_argument("--max-steps", type=int, default=15)
    p.add_argument("--model", default="python-client")
    a = p.parse_args()
    actions = solution_of(a.replay) if a.replay else ["DONE"]
    env = DeskenvEnv(a.url, a.observation, a.action_space, a.max_steps, a.model)
    try:
        obs = env.reset(a.task)
        png = screenshot_png(obs)
        print(f"reset {a.task}: {env.instruction!r}; screen {obs['screen']}, "
              f"screenshot {len(png) if png else 0} bytes", flush=True)
        for action in actions:
            obs, done, info = env.step(action)
            for x in info["executed"]:
                print(f"step {x['step']}: {str(x['action'])[:70]!r}"
                      f"{' error: ' + x['error'] if x.get('error') else ''}", flush=True)
            if done:
                print(f"done ({info['end']})", flush=True)
                break
        result = env.evaluate()
    finally:
        env.close()
    print(json.dumps({"task_id": result["task_id"], "score": result["score"],
                      "success": result["success"], "end": result["end"],
                      "steps_used": result["steps_used"], "episode_dir": result["episode_dir"]}))
    return 0 if result["success"] else 1


if __name__ == "__main__":
    sys.exit(main())
