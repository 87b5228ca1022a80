"""The argus_supervisor plugin's one helper: the daemon as a child process, its API over the
daemon's Unix socket, and the rules for what the plugin hands Agent Zero.

- `Daemon` starts `argus-supervisor serve --listen unix:api.sock` under the state root, restarts it
  with backoff when it exits, and stops it with Agent Zero (and, through PR_SET_PDEATHSIG, when
  Agent Zero dies without stopping it). Its stderr goes to Agent Zero's and to `daemon.log` under
  the state root (bounded), where the smoke check looks for leaked secrets.
- `call` is one bounded HTTP request over the socket, with the daemon's API token read from the
  state root (`api-token`, written by the daemon, mode 0600); `acall` is the same off the event
  loop. The token never leaves this process: the browser talks to the plugin's handlers, which
  Agent Zero authenticates.
- `for_host` is the one rule for text that crosses into Agent Zero's UI or chat: bounded, control
  characters removed, HTML-escaped. Agent Zero renders a notification's message and detail as HTML
  (`x-html`), and remote, Argus and Foreman text is data, never markup.
- `Notifier` hands Needs you, attempt outcomes (completed, failed, canceled), mission complete and
  critical failures — and nothing else — to Agent Zero's notifications, once each.

Imported as `usr.plugins.argus_supervisor.helpers.argus_supervisor_daemon` (Agent Zero's plugin
import rule): no `sys.path` edits.
"""

from __future__ import annotations

import asyncio
import ctypes
import html
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any, Callable

PREFIX = "/api/plugins/argus-supervisor"
PLUGIN_DIR = Path(__file__).resolve().parents[1]

# The daemon's operator verbs (its POST /campaigns/{id}/{verb} routes), and the fields they take: the
# plugin's own gate, held to the daemon's verb table (the view's `verbs`) by test_plugin.py.
ACTIONS = (
    "observe", "claim", "release", "pause", "resume", "cancel", "abandon", "submit",
    "intervene", "answer", "accept", "reject", "next-attempt", "resolve",
)
ACTION_FIELDS = ("objective", "task_id", "message", "reason", "applied", "not_applied")

# What reaches the operator as an Agent Zero notification; every other feed line stays in the feed.
NOTIFY_KINDS = {
    "NEEDS_YOU": ("warning", "Needs you"),
    "ATTEMPT_COMPLETED": ("info", "Attempt completed"),
    "ATTEMPT_FAILED": ("error", "Attempt failed"),
    "ATTEMPT_CANCELED": ("warning", "Attempt canceled"),
    "MISSION_COMPLETE": ("success", "Mission complete"),
    "CRITICAL_FAILURE": ("error", "Critical failure"),
    "REMOTE_RECOVERED": ("success", "OpenTraining answers again"),
}

# The remote's own feed (one line per change of how OpenTraining answers, for every campaign at
# once) is kept under this key, which no campaign id can be (ids never start with a dot).
REMOTE_FEED = ".remote"

# Bounds of what the plugin hands Agent Zero (characters, before escaping).
TITLE_MAX = 120
MESSAGE_MAX = 1000
TOOL_ANSWER_MAX = 4000

# The opt-in that lets operator actions through on a host without a login (the risk accepted).
OPEN_HOST_OPT_IN = "ARGUS_SUPERVISOR_PLUGIN_ALLOW_OPEN_HOST"

# daemon.log is cut to its newest half past this size.
LOG_MAX_BYTES = 1 << 20

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def for_host(text: Any, limit: int = MESSAGE_MAX) -> str:
    """Text for Agent Zero's UI or chat: at most `limit` characters (cut with an ellipsis), no
    control or bidirectional characters, and HTML-escaped, so that whatever renders it shows the
    characters and runs nothing."""
    s = _CONTROL.sub("", str(text if text is not None else ""))
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return html.escape(s, quote=True)


def _defaults() -> dict[str, Any]:
    return _defaults_from(PLUGIN_DIR / "default_config.yaml")


def _defaults_from(path: Path) -> dict[str, Any]:
    """A flat YAML file's `key: value` lines."""
    values: dict[str, Any] = {}
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
        "call_timeout": float(d["call_timeout_seconds"]),
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
    method: str, path: str, body: dict | None = None, timeout: float | None = None,
    cfg: dict[str, Any] | None = None,
) -> tuple[int, Any]:
    """One request to the daemon's API (`path` below its prefix): its status and JSON answer.
    Blocking, bounded by `timeout` per socket operation; from async code use `acall`."""
    cfg = cfg or config()
    conn = _UnixHTTPConnection(cfg["state_root"] / cfg["socket"], timeout or cfg["call_timeout"])
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


async def acall(
    method: str, path: str, body: dict | None = None, timeout: float | None = None,
    cfg: dict[str, Any] | None = None,
) -> tuple[int, Any]:
    """`call` in a worker thread, so Agent Zero's event loop never waits on the daemon; the whole
    call is bounded (a daemon that accepts and never answers is a DaemonError, not a hang)."""
    cfg = cfg or config()
    limit = timeout or cfg["call_timeout"]
    try:
        return await asyncio.wait_for(
            asyncio.to_thread(call, method, path, body, limit, cfg), limit + 1.0
        )
    except asyncio.TimeoutError:
        raise DaemonError(f"the daemon did not answer within {limit:.0f} s") from None


def segment(campaign_id: str) -> str:
    """A campaign id as one path segment (whatever it contains)."""
    return urllib.parse.quote(str(campaign_id), safe="")


def refusal(status: int, code: str, message: str, field: str | None = None):
    """An answer refused here, by the plugin (the daemon was not asked)."""
    error = {"code": code, "message": message}
    if field:
        error["field"] = field
    return respond(status, {"error": error, "refused_by": "plugin"})


def respond(status: int, body: Any):
    """An API handler's answer: the daemon's status and JSON, passed on as they are."""
    from helpers.api import Response  # Agent Zero's (Flask's) Response

    return Response(response=json.dumps(body), status=status, mimetype="application/json")


async def forward(method: str, path: str, body: dict | None = None, timeout: float | None = None):
    """One daemon call as a handler's answer; 503 `daemon_unreachable` when it says nothing."""
    try:
        return respond(*(await acall(method, path, body, timeout)))
    except DaemonError as e:
        return refusal(503, "daemon_unreachable", str(e))


def operator_refusal(request: Any):
    """None when an operator action may reach the daemon; otherwise the plugin's 403.

    Agent Zero's `requires_auth` lets everyone through when no login is configured, and some
    OpenOperator builds skip auth and CSRF altogether (on Hugging Face Spaces). An action that
    claims, cancels or accepts must not become an unauthenticated proxy, so the plugin checks for
    itself what the host's decorators should have: a login is configured, this request's session
    holds it, and its CSRF token matches — unless the operator accepted the risk explicitly."""
    from flask import session

    from helpers import login, runtime

    if os.environ.get(OPEN_HOST_OPT_IN) == "1":
        return None
    expected = login.get_credentials_hash()
    if not expected:
        return refusal(
            403, "host_auth_off",
            "Agent Zero has no login configured, so anyone who reaches it could act on campaigns: "
            f"set AUTH_LOGIN and AUTH_PASSWORD, or accept the risk with {OPEN_HOST_OPT_IN}=1",
        )
    if session.get("authentication") != expected:
        return refusal(
            403, "host_auth_skipped",
            "this request carries no Agent Zero login session (the host's auth check did not run): "
            f"log in, or accept the risk with {OPEN_HOST_OPT_IN}=1",
        )
    sent = request.headers.get("X-CSRF-Token") or request.cookies.get(
        "csrf_token_" + runtime.get_runtime_id()
    )
    if not session.get("csrf_token") or sent != session.get("csrf_token"):
        return refusal(403, "host_csrf_skipped", "CSRF token missing or invalid")
    return None


def plugin_identity() -> dict[str, Any]:
    """The plugin that runs, as its installer (the _argus_supervisor_upgrade plugin, in Agent
    Zero's own plugins) reads it, by the installer's own code: its version, the digest of its code
    and assets, and its install record. Without the installer there is no record to compare with:
    its version alone, and why."""
    try:
        from plugins._argus_supervisor_upgrade.helpers import install
    except ImportError:
        return {"version": _defaults_from(PLUGIN_DIR / "plugin.yaml").get("version"), "digest": None,
                "dir": str(PLUGIN_DIR), "install": None, "why": "the upgrade plugin is not installed"}
    return {**install.installed(PLUGIN_DIR), "dir": str(PLUGIN_DIR)}


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
                    stderr=subprocess.PIPE, preexec_fn=_die_with_parent,
                )
            except OSError as e:
                self.log(f"argus-supervisor cannot start: {e.strerror}")
                self._stop.wait(delay)
                delay = min(delay * 2, self.cfg["restart_max"])
                continue
            self.starts += 1
            pipe = threading.Thread(target=self._copy_log, args=(self.proc.stderr,), daemon=True)
            pipe.start()
            code = self.proc.wait()
            pipe.join(5)
            if self._stop.is_set():
                return
            # A daemon that ran a while earns a fresh backoff; one that keeps dying waits longer.
            if time.monotonic() - started > self.cfg["restart_max"]:
                delay = self.cfg["restart_first"]
            self.log(f"argus-supervisor exited with {code}; restarting in {delay:.0f} s")
            self._stop.wait(delay)
            delay = min(delay * 2, self.cfg["restart_max"])

    def _copy_log(self, stream) -> None:
        """The daemon's log lines to Agent Zero's stderr and to daemon.log (kept to LOG_MAX_BYTES)."""
        path = self.cfg["state_root"] / "daemon.log"
        for line in iter(stream.readline, b""):
            sys.stderr.write(line.decode("utf-8", "replace"))
            try:
                with open(path, "ab") as f:
                    f.write(line)
                    size = f.tell()
                if size > LOG_MAX_BYTES:
                    path.write_bytes(path.read_bytes()[-LOG_MAX_BYTES // 2:])
            except OSError:
                pass  # the log copy is best effort; Agent Zero's stderr has every line
        stream.close()

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
        """Read every feed once — each campaign's, and the remote's (an outage is told there
        once, for every campaign it affects) — and notify what is new. Returns how many
        notifications were sent."""
        status, listing = call("GET", "/campaigns", cfg=self.cfg)
        if status != 200:
            return 0
        feeds = [(c.get("campaign_id", ""), f"/campaigns/{segment(c.get('campaign_id', ''))}/messages")
                 for c in listing.get("campaigns", [])]
        feeds.append((REMOTE_FEED, "/remote/messages"))
        sent = 0
        for key, path in feeds:
            status, feed = call("GET", path, cfg=self.cfg)
            if status != 200:
                continue
            lines = feed.get("messages", [])
            for m in lines[self.seen.get(key, 0):]:
                kind = m.get("kind")
                if kind in NOTIFY_KINDS:
                    level, title = NOTIFY_KINDS[kind]
                    title = title if key == REMOTE_FEED else f"{title}: {key}"
                    self.notify(
                        level=level,
                        title=for_host(title, TITLE_MAX),
                        message=for_host(m.get("text", "")),
                        detail=for_host(
                            "From argus-supervisor. Text from OpenTraining, Argus or Foreman in "
                            "it is untrusted data, shown as text."
                        ),
                    )
                    sent += 1
            if len(lines) != self.seen.get(key, 0):
                self.seen[key] = len(lines)
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


def agent_zero_notify(level: str, title: str, message: str, detail: str = "") -> None:
    """Agent Zero's notification mechanism (AgentContext's notification manager). The caller
    passes text already made safe by `for_host`."""
    from agent import AgentContext
    from helpers.notification import NotificationPriority, NotificationType

    AgentContext.get_notification_manager().add_notification(
        type=NotificationType(level), priority=NotificationPriority.HIGH,
        title=title, message=message, detail=detail, display_time=30,
    )


def ensure_started(notify: Callable[..., Any] | None = None) -> Daemon:
    """Start the daemon and the notifier once per Agent Zero process; a second call finds them
    running. They stop when Agent Zero's process exits (atexit), and the daemon also when it dies
    (PR_SET_PDEATHSIG)."""
    with _lock:
        if "daemon" not in _running:
            daemon = Daemon()
            daemon.start()
            notifier = Notifier(notify or agent_zero_notify, daemon.cfg)
            notifier.start()
            _running.update(daemon=daemon, notifier=notifier)
        return _running["daemon"]


def stop_all() -> None:
    with _lock:
        if "notifier" in _running:
            _running.pop("notifier").stop()
        if "daemon" in _running:
            _running.pop("daemon").stop()
