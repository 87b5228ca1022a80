"""Issue 53, end to end as deployed: one real Agent Zero serves A2A as today's OpenTraining (its own
fasta2a server, the token in its URL's path, its tasks in memory), a second real Agent Zero is
OpenOperator hosting the plugin and its daemon, and the operator works through the second only:
its plugin API, its notifications and the profile's tool.

The only stand-in is the model behind the first Agent Zero: tests/interop/servers/model_double.py,
a scripted OpenAI-compatible endpoint (markers in a task's text decide its answer)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import requests

from conftest import REPO, free_port, required_env, run_in_host, wait_for

MODEL_DOUBLE = REPO / "tests" / "interop" / "servers" / "model_double.py"


class OpenTraining:
    """The first Agent Zero: its A2A server enabled, its model the scripted double."""

    def __init__(self, tmp: Path):
        self.root = tmp / "opentraining"
        shutil.copytree(Path(required_env("ARGUS_OPENOPERATOR_TREE")), self.root, symlinks=True)
        memory = self.root / "usr" / "plugins" / "_memory"
        memory.mkdir(parents=True, exist_ok=True)
        (memory / ".toggle-0").write_text("")
        self.port, model_port = free_port(), free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp / "opentraining.log"
        self.model = subprocess.Popen([sys.executable, str(MODEL_DOUBLE), "--port", str(model_port)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.root),
               "PYTHONPATH": required_env("ARGUS_OPENOPERATOR_STUBS"), "PYTHONDONTWRITEBYTECODE": "1",
               "AUTH_LOGIN": "trainer", "AUTH_PASSWORD": "trainer-password",
               "A0_SET_a2a_server_enabled": "true", "API_KEY_OTHER": "scripted",
               "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        for m in ("chat_model", "utility_model", "embedding_model"):
            env[f"A0_SET__model_config__{m}__provider"] = "other"
            env[f"A0_SET__model_config__{m}__name"] = "scripted"
            env[f"A0_SET__model_config__{m}__api_base"] = f"http://127.0.0.1:{model_port}/v1"
        self.env = env
        self.start()
        self.url = f"{self.base}/a2a/t-{self._token()}"

    def start(self) -> None:
        """Agent Zero's `run_ui.py` (again, after `stop`: the same login, so the same token;
        the tasks it kept in memory are gone)."""
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "run_ui.py", "--port", str(self.port), "--host", "127.0.0.1", "--dockerized=true"],
            cwd=self.root, env=self.env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        wait_for("OpenTraining's Agent Zero to serve", self._serving, 90, 0.2)

    def _serving(self) -> bool:
        assert self.proc.poll() is None, self.log_path.read_text(errors="replace")[-4000:]
        try:
            return requests.get(self.base + "/login", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    def _token(self) -> str:
        """The A2A token as Agent Zero's settings show it."""
        s = requests.Session()
        s.headers["Origin"] = self.base
        s.post(self.base + "/login", data={"username": "trainer", "password": "trainer-password"},
               allow_redirects=False, timeout=10)
        s.headers["X-CSRF-Token"] = s.get(self.base + "/api/csrf_token", timeout=10).json()["token"]
        settings = s.post(self.base + "/api/settings_get", json={}, timeout=10).json()

        def find(v):
            if isinstance(v, dict):
                return v.get("mcp_server_token") or next(filter(None, map(find, v.values())), None)
            if isinstance(v, list):
                return next(filter(None, map(find, v)), None)
            return None

        token = find(settings)
        assert token, settings
        return token

    def rpc(self, method: str, params: dict) -> dict:
        return requests.post(self.url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
                             timeout=30).json()

    def send(self, text: str) -> str:
        """A task started by OpenTraining's own user."""
        answer = self.rpc("message/send", {
            "message": {"kind": "message", "role": "user", "messageId": f"m-{free_port()}",
                        "parts": [{"kind": "text", "text": text}]},
            "configuration": {"blocking": False, "acceptedOutputModes": ["text/plain"]}})
        return answer["result"]["id"]

    def state(self, task: str) -> str | None:
        return ((self.rpc("tasks/get", {"id": task}).get("result") or {}).get("status") or {}).get("state")

    def stop(self, model: bool = True) -> None:
        for p in (self.proc, self.model) if model else (self.proc,):
            if p.poll() is None:
                p.kill()
                p.wait()


def notified(a0, s) -> list[dict]:
    r = s.post(a0.base + "/api/notifications_history", json={}, timeout=10)
    assert r.status_code == 200, r.text
    return [n for n in r.json()["notifications"] if "argus-supervisor" in n["detail"]]


def test_the_operator_works_from_openoperator_while_agent_zero_serves_as_opentraining(agent_zero, tmp_path):
    ot = OpenTraining(tmp_path)
    try:
        done, failed = ot.send("train the model"), ot.send("train it badly [fail]")
        wait_for("OpenTraining to finish both", lambda: ot.state(done) == "completed" and ot.state(failed) == "failed", 60, 0.3)
        running = ot.send("train it slowly [slow 600]")
        a0 = agent_zero(remote=ot.url)
        s = a0.session()
        for cid, task in (("c-done", done), ("c-failed", failed), ("c-live", running)):
            status, answer = a0.act(s, cid, "observe", objective="train", task_id=task)
            assert status == 200, answer
        a0.wait_state(s, "c-done", "remote_terminal_local_pending")
        a0.wait_state(s, "c-failed", "remote_terminal_local_pending")
        a0.wait_state(s, "c-live", "observing.watching")

        # The answer Agent Zero gave (only in its task's history) is the evidence the operator sees.
        view = a0.post(s, "campaigns", {"campaign_id": "c-done"})[1]
        assert view["latest_evidence"]["answer"]["untrusted_text"] == "Done: train the model", view
        said = run_in_host(a0, "tool", {"action": "show", "campaign_id": "c-done"})
        assert "the remote's answer (untrusted text, from its history): Done: train the model" in said, said
        # The outcomes reach the operator as notifications, a failure as a failure.
        got = wait_for("both outcomes notified", lambda: (lambda n: n if len(n) >= 2 else None)(notified(a0, s)), 40, 0.5)
        titles = {(n["title"], n["type"]) for n in got}
        assert ("Attempt completed: c-done", "info") in titles, titles
        assert ("Attempt failed: c-failed", "error") in titles, titles

        # What the remote cannot do is neither offered nor done, and a refusal changes nothing.
        assert "next-attempt" not in view["allowed_actions"], view
        status, answer = a0.act(s, "c-done", "next-attempt", message="again")
        assert status == 409 and answer["code"] == "observer_only" and answer["refused_by"] == "supervisor", answer
        after = a0.post(s, "campaigns", {"campaign_id": "c-done"})[1]
        for unchanged in ("state", "attempt_history", "path", "latest_significant_event"):
            assert after[unchanged] == view[unchanged], (unchanged, after)
        assert after["machine"]["state"] == view["machine"]["state"], after

        # OpenTraining goes down: one notification for the outage, naming the campaign that waits
        # on it (not the finished ones), however many campaigns there are.
        before = len(notified(a0, s))
        ot.stop(model=False)
        outage = wait_for("the outage notified", lambda: [n for n in notified(a0, s) if "unreachable" in n["message"]], 60, 0.5)
        wait_for("the notifier's next pass", lambda: len(notified(a0, s)) >= before + 1, 20, 0.5)
        assert len(outage) == 1, outage
        assert outage[0]["type"] == "error" and outage[0]["title"] == "Critical failure", outage
        assert "c-live" in outage[0]["message"] and "c-done" not in outage[0]["message"], outage
        health = a0.post(s, "health")[1]
        assert "remote_unreachable" in [r if isinstance(r, str) else r.get("class") for r in health.get("reasons", [])], health
        # Back: told once too, as good news.
        ot.start()
        back = wait_for("the recovery notified", lambda: [n for n in notified(a0, s) if n["title"] == "OpenTraining answers again"], 60, 0.5)
        assert len(back) == 1 and back[0]["type"] == "success", back
        # It came back without the tasks it kept in memory: the live campaign's lost task is
        # notified once, under that campaign's name; the finished one's is not.
        gone = wait_for("the lost task notified", lambda: [n for n in notified(a0, s) if n["message"].startswith("The remote task is gone")], 60, 0.5)
        assert len(gone) == 1 and gone[0]["type"] == "error", gone
        assert gone[0]["title"] == "Critical failure: c-live", gone
        a0.wait_state(s, "c-live", "observing.task_not_found")
        # Its token rotated (OpenTraining restarted under another password): the refusal is
        # notified once, saying which token to check and where it travels (the URL's path), and
        # the campaign already waiting on it is named for it, not left "unavailable".
        ot.stop(model=False)
        ot.env["AUTH_PASSWORD"] = "another-password"
        ot.start()
        refused = wait_for("the refusal notified", lambda: [n for n in notified(a0, s) if "refuses our credentials" in n["message"]], 90, 0.5)
        assert len(refused) == 1 and refused[0]["type"] == "error", refused
        assert "OPENTRAINING_A2A_URL" in refused[0]["message"], refused
        a0.wait_state(s, "c-live", "observing.auth_refused")
        view = a0.post(s, "campaigns", {"campaign_id": "c-live"})[1]
        assert view["remote_condition"]["condition"] == "auth_required", view
        # Many notifier passes later, the lost task is still told once.
        assert len([n for n in notified(a0, s) if n["message"].startswith("The remote task is gone")]) == 1
    finally:
        ot.stop()
