"""Fixtures: the real OpenOperator (vendor/openoperator: Agent Zero's snapshot, unpacked by
scripts/test.sh) with this plugin installed as openoperator/Dockerfile installs it, started as
`run_ui.py` on a loopback port; the real argus-supervisor binary (the plugin starts it as a child on
its Unix socket); and the simulated remote.

The only parts of the host that are not real are the two stand-ins for the speech and embedding
stacks (vendor/openoperator/stubs), which the plugin never uses. scripts/test.sh runs these tests
in the Python >= 3.12 venv of the host's dependency lock."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

TESTS = Path(__file__).resolve().parent
OPENOPERATOR = TESTS.parent
REPO = OPENOPERATOR.parent
PLUGIN = OPENOPERATOR / "plugins" / "argus_supervisor"
API = "/api/plugins/argus_supervisor/"
SIM_TOKEN = "sim-token-plugin-0123456789"
LOGIN = {"username": "operator", "password": "pass-0123456789"}


def wait_for(what: str, check, timeout: float = 40.0, every: float = 0.1):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(every)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def required_env(name: str) -> str:
    value = os.environ.get(name)
    assert value, f"set {name} (scripts/test.sh does)"
    return value


@pytest.fixture(scope="session")
def binary() -> str:
    path = required_env("ARGUS_SUPERVISOR_BIN")
    assert Path(path).is_file(), path
    return path


@pytest.fixture()
def start_sim(binary):
    """A simulated OpenTraining playing a scenario (a built-in name or a TOML file)."""
    procs = []

    def start(scenario: str = "repair") -> str:
        proc = subprocess.Popen(
            [binary, "sim", "--scenario", scenario, "--listen", "127.0.0.1:0", "--token", SIM_TOKEN],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        procs.append(proc)
        url = proc.stdout.readline().strip()
        assert re.match(r"^http://127\.0\.0\.1:\d+/$", url), url
        return url

    yield start
    for p in procs:
        p.kill()
        p.wait()


UPGRADE = OPENOPERATOR / "plugins" / "_argus_supervisor_upgrade"


def install(root: Path, tree: Path) -> Path:
    """The snapshot, and the plugin as openoperator/Dockerfile installs it: the image's copy outside
    the Agent Zero root (as /opt/argus-supervisor/plugin), and the upgrade plugin in Agent Zero's
    own plugins, which installs that copy into usr/plugins when Agent Zero starts. The image copy's
    path, for ARGUS_SUPERVISOR_PLUGIN_IMAGE_COPY."""
    shutil.copytree(tree, root, symlinks=True)
    shutil.copytree(UPGRADE, root / "plugins" / UPGRADE.name, ignore=shutil.ignore_patterns("__pycache__"))
    image = root.parent / f"{root.name}-image-plugin"
    if not image.exists():
        shutil.copytree(PLUGIN, image, ignore=shutil.ignore_patterns("__pycache__"))
    return image


def _become_subreaper() -> None:
    """prctl(PR_SET_CHILD_SUBREAPER, 1), kept across the exec that follows."""
    import ctypes

    if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


class AgentZero:
    """One real OpenOperator process (`run_ui.py`) with the plugin installed."""

    def __init__(self, root: Path, sim: str, binary: str, login: bool, env: dict[str, str],
                 remote_token: str | None = SIM_TOKEN):
        self.root = root
        self.remote_url = sim
        self.state = root / "usr" / "argus-supervisor"
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = root.parent / f"agent-zero-{self.port}.log"
        self.proc: subprocess.Popen | None = None
        # The user Agent Zero runs as (None: this test's own), as a container's USER.
        self.user: int | None = None
        # Whether Agent Zero's process adopts the orphans of its descendants, as a container's
        # PID 1 does: a process that double-forks away (the Argus daemon) stays in its family.
        self.subreaper = False
        if login:
            (root / "usr" / ".env").write_text(
                f"AUTH_LOGIN={LOGIN['username']}\nAUTH_PASSWORD={LOGIN['password']}\n")
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("AUTH_", "ARGUS_SUPERVISOR_", "OPENTRAINING_"))}
        self.env.update({
            "PYTHONPATH": required_env("ARGUS_OPENOPERATOR_STUBS"),
            "ARGUS_SUPERVISOR_BIN": binary,
            "ARGUS_SUPERVISOR_HOME": str(self.state),
            "OPENTRAINING_A2A_URL": sim,
            "ARGUS_SUPERVISOR_ALLOW_INSECURE_LOOPBACK": "1",
            "ARGUS_SUPERVISOR_HEARTBEAT_SECONDS": "1",
            "ARGUS_SUPERVISOR_LEASE_TTL_SECONDS": "120",
            "ARGUS_SUPERVISOR_READBACK_GRACE_SECONDS": "3",
            # These tests start where the operator has qualified the remote; the policy's own
            # test sets it back to the daemon's default (1) and runs `qualify` in the host.
            "ARGUS_SUPERVISOR_REQUIRE_QUALIFICATION": "0",
            # An API token in Agent Zero's own environment must never become the daemon's.
            "ARGUS_SUPERVISOR_API_TOKEN": "agent-zero-env-token-not-the-daemons",
        })
        if remote_token:
            self.env["OPENTRAINING_A2A_TOKEN"] = remote_token
        self.env.update(env)

    def start(self) -> "AgentZero":
        log = open(self.log_path, "ab")
        as_user = {} if self.user is None else {"user": self.user, "group": self.user, "extra_groups": []}
        if self.subreaper:
            as_user["preexec_fn"] = _become_subreaper
        self.proc = subprocess.Popen(
            [sys.executable, "run_ui.py", "--port", str(self.port), "--host", "127.0.0.1"],
            cwd=self.root, env=self.env, stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, **as_user,
        )
        log.close()
        wait_for("Agent Zero to serve", self._serving, 90, 0.2)
        return self

    def _serving(self) -> bool:
        assert self.proc.poll() is None, f"Agent Zero exited:\n{self.log()}"
        try:
            return requests.get(self.base + "/login", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-6000:]
        except OSError:
            return ""

    def session(self) -> requests.Session:
        """A browser-like session: logged in (when a login is configured), with the CSRF token."""
        s = requests.Session()
        s.headers["Origin"] = self.base
        s.post(self.base + "/login", data=LOGIN, allow_redirects=False, timeout=10)
        answer = s.get(self.base + "/api/csrf_token", timeout=10).json()
        assert answer.get("ok"), answer
        s.headers["X-CSRF-Token"] = answer["token"]
        return s

    def post(self, s: requests.Session, handler: str, body: dict | None = None):
        r = s.post(self.base + API + handler, json=body or {}, allow_redirects=False, timeout=60)
        try:
            return r.status_code, r.json()
        except ValueError:
            return r.status_code, {"text": r.text}

    def act(self, s, cid: str, action: str, **fields):
        return self.post(s, "campaign_action", {"campaign_id": cid, "action": action, **fields})

    def state_of(self, s, cid: str) -> str:
        return self.post(s, "campaigns", {"campaign_id": cid})[1].get("state", "")

    def wait_state(self, s, cid: str, want: str, timeout: float = 40.0):
        wait_for(f"{cid} to reach {want}", lambda: self.state_of(s, cid) == want, timeout, 0.3)

    def daemon_call(self, method: str, path: str, body: dict | None = None):
        """The daemon's API directly over its socket (what the daemon itself knows)."""
        return run_in_host(self, "daemon_call", method, path, body)

    def audit(self) -> dict:
        """The simulated remote's own record of every call it received (what the supervisor sent)."""
        r = requests.get(self.remote_url.rstrip("/") + "/_sim/audit",
                         headers={"Authorization": f"Bearer {SIM_TOKEN}"}, timeout=10)
        assert r.status_code == 200, r.text
        return r.json()

    def sent(self, method: str) -> list[dict]:
        return [e for e in self.audit()["entries"] if e["method"] == method]

    def host_env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """Agent Zero's environment for a process run in its root, as an operator runs one there
        (its modules and the plugin importable as `usr.plugins…`)."""
        return {**self.env, "PYTHONPATH": self.env["PYTHONPATH"] + os.pathsep + str(self.root),
                **(extra or {})}

    def daemon_pids(self) -> list[int]:
        """The `argus-supervisor serve` processes whose parent is this Agent Zero."""
        pids = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if len(argv) > 1 and argv[1] == b"serve" and ppid == self.proc.pid:
                pids.append(int(entry.name))
        return pids

    def daemon_ready(self) -> bool:
        try:
            status, _ = self.post(self.session(), "health")
        except requests.RequestException:
            return False
        return status == 200

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def run_in_host(a0: AgentZero, what: str, *args, env: dict[str, str] | None = None):
    """Run openoperator/tests/in_host.py inside the Agent Zero root, with Agent Zero's own modules
    and the plugin imported as Agent Zero imports them; its JSON answer."""
    done = subprocess.run(
        [sys.executable, str(TESTS / "in_host.py"), what, json.dumps(args)],
        cwd=a0.root, env=a0.host_env(env),
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture()
def agent_zero(tmp_path, start_sim, binary):
    """A factory of real OpenOperator processes: `agent_zero(scenario=..., login=..., env=...)`;
    every one is stopped (SIGTERM, as a container stops) at the end."""
    made: list[AgentZero] = []
    tree = Path(required_env("ARGUS_OPENOPERATOR_TREE"))

    def make(scenario: str = "repair", login: bool = True, env: dict[str, str] | None = None,
             root: Path | None = None, start: bool = True, ready: bool = True,
             remote: str | None = None) -> AgentZero:
        """`remote`: OpenTraining's A2A URL (its token in the path, as Agent Zero gives it)
        instead of a simulated remote playing `scenario`."""
        if root is None:
            root = tmp_path / f"a0-{len(made)}"
            install(root, tree)
        image = root.parent / f"{root.name}-image-plugin"
        a0 = AgentZero(root, remote or start_sim(scenario), binary, login,
                       {"ARGUS_SUPERVISOR_PLUGIN_IMAGE_COPY": str(image), **(env or {})},
                       remote_token=None if remote else SIM_TOKEN)
        made.append(a0)
        if start:
            a0.start()
            if ready:
                wait_for("the daemon to be ready", a0.daemon_ready, 60, 0.3)
        return a0

    yield make
    for a0 in made:
        a0.stop()


@pytest.fixture()
def a0(agent_zero) -> AgentZero:
    return agent_zero()


@pytest.fixture()
def chrome():
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
              "--window-size=1400,1000", "--disable-background-networking", "--disable-component-update",
              "--disable-sync", "--no-first-run"):
        options.add_argument(a)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService("/usr/bin/chromedriver"))
    yield driver
    driver.quit()
