"""The argus_supervisor plugin's one helper: the daemon as a child process, and its API over the
daemon's Unix socket.

- `Daemon` starts `argus-supervisor serve --listen unix:api.sock` under the state root, restarts it
  with backoff when it exits, and stops it with Agent Zero (and, through PR_SET_PDEATHSIG, when
  Agent Zero dies without stopping it).
- `call` is one HTTP request over the socket, with the daemon's API token read from the state root
  (`api-token`, written by the daemon, mode 0600). The token never leaves this process: the
  browser talks to the plugin's handlers, which Agent Zero authenticates.
- `Notifier` reads each campaign's feed and hands Needs you, attempt completed, mission complete
  and critical failures — and nothing else — to Agent Zero's notifications, once each.

The module is named for the plugin (not `helpers`), so it never shadows Agent Zero's own package.
"""

from __future__ import annotations

import ctypes
import http.client
import json
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any, Callable

PREFIX = "/api/plugins/argus-supervisor"
PLUGIN_DIR = Path(__file__).resolve().parents[1]

# The daemon's operator verbs (its POST /campaigns/{id}/{verb} routes), and the fields each takes.
ACTIONS = (
    "observe", "claim", "release", "pause", "resume", "cancel", "abandon", "submit",
    "intervene", "answer", "accept", "reject", "next-attempt", "resolve",
)
ACTION_FIELDS = ("objective", "task_id", "message", "reason", "applied", "not_applied")

# What reaches the operator as an Agent Zero notification; every other feed line stays in the feed.
NOTIFY_KINDS = {
    "NEEDS_YOU": ("warning", "Needs you"),
    "ATTEMPT_COMPLETED": ("info", "Attempt completed"),
    "MISSION_COMPLETE": ("success", "Mission complete"),
    "CRITICAL_FAILURE": ("error", "Critical failure"),
}


def _defaults() -> dict[str, Any]:
    values: dict[str, Any] = {}
    path = PLUGIN_DIR / "default_config.yaml"
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if ":" in line:
            key, value = line.split(":", 1)
            values[key.strip()] = value.strip()
    return values


def config() -> dict[str, Any]:
    """The plugin's settings: default_config.yaml, overridden by the environment."""
    d = _defaults()
    return {
        "binary": os.environ.get("ARGUS_SUPERVISOR_BIN") or d["binary"],
        "state_root": Path(os.environ.get("ARGUS_SUPERVISOR_HOME") or d["state_root"]),
        "socket": d["socket"],
        "restart_first": float(d["restart_first_seconds"]),
        "restart_max": float(d["restart_max_seconds"]),
        "notify_every": float(d["notify_every_seconds"]),
    }


class DaemonError(Exception):
    """The daemon could not be reached (not an answer of the daemon's: it said nothing)."""


class _UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: Path, timeout: float):
        super().__init__("localhost", timeout=timeout)
        self._path = str(path)

    def connect(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self._path)
        self.sock = s


def token(cfg: dict[str, Any] | None = None) -> str:
    cfg = cfg or config()
    try:
        return (cfg["state_root"] / "api-token").read_text(encoding="utf-8").strip()
    except OSError as e:
        raise DaemonError(f"the daemon's token is not readable yet ({e.strerror})") from None


def call(
    method: str, path: str, body: dict | None = None, timeout: float = 45.0,
    cfg: dict[str, Any] | None = None,
) -> tuple[int, Any]:
    """One request to the daemon's API (`path` below its prefix): its status and JSON answer."""
    cfg = cfg or config()
    conn = _UnixHTTPConnection(cfg["state_root"] / cfg["socket"], timeout)
    headers = {"Authorization": f"Bearer {token(cfg)}", "Host": "localhost"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    try:
        conn.request(method, PREFIX + path, body=data, headers=headers)
        resp = conn.getresponse()
        raw = resp.read()
    except OSError as e:
        raise DaemonError(f"the daemon is not answering ({e.__class__.__name__})") from None
    finally:
        conn.close()
    try:
        return resp.status, json.loads(raw) if raw else None
    except ValueError:
        return resp.status, {"text": raw.decode("utf-8", "replace")}


def segment(campaign_id: str) -> str:
    """A campaign id as one path segment (whatever it contains)."""
    return urllib.parse.quote(str(campaign_id), safe="")


def unreachable(e: DaemonError) -> dict[str, Any]:
    """The answer when the daemon said nothing: refused here, by the plugin."""
    return {"error": {"code": "daemon_unreachable", "message": str(e)}, "refused_by": "plugin"}


def respond(status: int, body: Any):
    """An API handler's answer: the daemon's status and JSON, passed on as they are."""
    from helpers.api import Response  # Agent Zero's (Flask's) Response

    return Response(response=json.dumps(body), status=status, mimetype="application/json")


def forward(method: str, path: str, body: dict | None = None, timeout: float = 45.0):
    """One daemon call as a handler's answer; 503 `daemon_unreachable` when it says nothing."""
    try:
        return respond(*call(method, path, body, timeout))
    except DaemonError as e:
        return respond(503, unreachable(e))


def _die_with_parent() -> None:
    # The daemon stops when Agent Zero's process ends, even without a clean shutdown.
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class Daemon:
    """`argus-supervisor serve` as a child: started once, restarted with backoff, stopped on demand."""

    def __init__(self, cfg: dict[str, Any] | None = None, log: Callable[[str], None] = print):
        self.cfg = cfg or config()
        self.log = log
        self.proc: subprocess.Popen | None = None
        self.starts = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def command(self) -> list[str]:
        return [str(self.cfg["binary"]), "serve", "--listen", f"unix:{self.cfg['socket']}",
                "--home", str(self.cfg["state_root"])]

    def environment(self) -> dict[str, str]:
        # The daemon reads its own settings from the environment; its API token is its own (made
        # on the socket and kept in the state root), never one of Agent Zero's.
        env = {k: v for k, v in os.environ.items() if k != "ARGUS_SUPERVISOR_API_TOKEN"}
        env.pop("ARGUS_SUPERVISOR_LISTEN", None)
        return env

    def start(self) -> None:
        if self._thread is not None:
            return
        self.cfg["state_root"].mkdir(parents=True, exist_ok=True)
        self._thread = threading.Thread(target=self._run, name="argus-supervisor", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        delay = self.cfg["restart_first"]
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                self.proc = subprocess.Popen(
                    self.command(), env=self.environment(), stdin=subprocess.DEVNULL,
                    preexec_fn=_die_with_parent,
                )
            except OSError as e:
                self.log(f"argus-supervisor cannot start: {e.strerror}")
                self._stop.wait(delay)
                delay = min(delay * 2, self.cfg["restart_max"])
                continue
            self.starts += 1
            code = self.proc.wait()
            if self._stop.is_set():
                return
            # A daemon that ran a while earns a fresh backoff; one that keeps dying waits longer.
            if time.monotonic() - started > self.cfg["restart_max"]:
                delay = self.cfg["restart_first"]
            self.log(f"argus-supervisor exited with {code}; restarting in {delay:.0f} s")
            self._stop.wait(delay)
            delay = min(delay * 2, self.cfg["restart_max"])

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM (the daemon finishes its step and persists), then SIGKILL after `timeout`."""
        self._stop.set()
        proc = self.proc
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._thread is not None:
            self._thread.join(timeout)


class Notifier:
    """Feed lines of the notified kinds, each handed once (across restarts) to `notify`."""

    def __init__(self, notify: Callable[..., Any], cfg: dict[str, Any] | None = None):
        self.cfg = cfg or config()
        self.notify = notify
        self.seen_path = self.cfg["state_root"] / "plugin-notified.json"
        try:
            self.seen: dict[str, int] = json.loads(self.seen_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.seen = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def poll_once(self) -> int:
        """Read every feed once; notify what is new. Returns how many notifications were sent."""
        status, listing = call("GET", "/campaigns", cfg=self.cfg)
        if status != 200:
            return 0
        sent = 0
        for c in listing.get("campaigns", []):
            cid = c.get("campaign_id", "")
            status, feed = call("GET", f"/campaigns/{segment(cid)}/messages", cfg=self.cfg)
            if status != 200:
                continue
            lines = feed.get("messages", [])
            for m in lines[self.seen.get(cid, 0):]:
                kind = m.get("kind")
                if kind in NOTIFY_KINDS:
                    level, title = NOTIFY_KINDS[kind]
                    self.notify(level=level, title=f"{title}: {cid}", message=m.get("text", ""))
                    sent += 1
            if len(lines) != self.seen.get(cid, 0):
                self.seen[cid] = len(lines)
                tmp = self.seen_path.with_suffix(".tmp")
                tmp.write_text(json.dumps(self.seen), encoding="utf-8")
                os.replace(tmp, self.seen_path)
        return sent

    def start(self) -> None:
        if self._thread is not None:
            return

        def loop() -> None:
            while not self._stop.wait(self.cfg["notify_every"]):
                try:
                    self.poll_once()
                except DaemonError:
                    pass  # the daemon restarts; its feeds are read again once it answers

        self._thread = threading.Thread(target=loop, name="argus-supervisor-notify", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()


_lock = threading.Lock()
_running: dict[str, Any] = {}


def agent_zero_notify(level: str, title: str, message: str) -> None:
    """Agent Zero's notification mechanism (AgentContext's notification manager)."""
    from agent import AgentContext
    from helpers.notification import NotificationPriority, NotificationType

    AgentContext.get_notification_manager().add_notification(
        type=NotificationType(level), priority=NotificationPriority.HIGH,
        title=title, message=message, detail="", display_time=30,
    )


def ensure_started(shutdown: Any = None, notify: Callable[..., Any] | None = None) -> Daemon:
    """Start the daemon and the notifier once per Agent Zero process (either startup hook may call
    this; the second call finds them running). With `shutdown` (the server's exit stack), both stop
    with Agent Zero."""
    with _lock:
        if "daemon" not in _running:
            daemon = Daemon()
            daemon.start()
            notifier = Notifier(notify or agent_zero_notify, daemon.cfg)
            notifier.start()
            _running.update(daemon=daemon, notifier=notifier)
            if shutdown is not None and hasattr(shutdown, "callback"):
                shutdown.callback(stop_all)
        return _running["daemon"]


def stop_all() -> None:
    with _lock:
        if "notifier" in _running:
            _running.pop("notifier").stop()
        if "daemon" in _running:
            _running.pop("daemon").stop()
