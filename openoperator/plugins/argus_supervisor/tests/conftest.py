"""Fixtures: the Agent Zero stand-in (openoperator/standin/, see its README) with this plugin
installed as a user plugin, the real argus-supervisor binary, and its simulated remote.

scripts/test.sh runs these with the stand-in's venv and ARGUS_SUPERVISOR_BIN pointing at the binary
the Rust tests built."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

PLUGIN = Path(__file__).resolve().parents[1]
OPENOPERATOR = PLUGIN.parents[1]
STANDIN = OPENOPERATOR / "standin"
sys.path.insert(0, str(STANDIN))
sys.path.insert(0, str(PLUGIN / "helpers"))

SIM_TOKEN = "sim-token-plugin"


def wait_for(what: str, check, timeout: float = 40.0):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


@pytest.fixture(scope="session")
def binary() -> str:
    path = os.environ.get("ARGUS_SUPERVISOR_BIN")
    assert path and Path(path).is_file(), "set ARGUS_SUPERVISOR_BIN (scripts/test.sh does)"
    return path


@pytest.fixture()
def sim(binary):
    proc = subprocess.Popen(
        [binary, "sim", "--scenario", "repair", "--listen", "127.0.0.1:0", "--token", SIM_TOKEN],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    url = proc.stdout.readline().strip()
    assert re.match(r"^http://127\.0\.0\.1:\d+/$", url), url
    yield url
    proc.kill()
    proc.wait()


@pytest.fixture()
def a0(tmp_path, sim, binary, monkeypatch):
    """An Agent Zero root with this plugin in usr/plugins, the daemon's settings in the
    environment (as OpenOperator's would be), and the stand-in app."""
    root = tmp_path / "a0"
    plugins = root / "usr" / "plugins"
    plugins.mkdir(parents=True)
    shutil.copytree(PLUGIN, plugins / "argus_supervisor", ignore=shutil.ignore_patterns("tests", "__pycache__"))
    state = root / "usr" / "argus-supervisor"
    for k, v in {
        "ARGUS_SUPERVISOR_BIN": binary,
        "ARGUS_SUPERVISOR_HOME": str(state),
        "OPENTRAINING_A2A_URL": sim,
        "OPENTRAINING_A2A_TOKEN": SIM_TOKEN,
        "ARGUS_SUPERVISOR_ALLOW_INSECURE_LOOPBACK": "1",
        "ARGUS_SUPERVISOR_HEARTBEAT_SECONDS": "1",
        "ARGUS_SUPERVISOR_LEASE_TTL_SECONDS": "120",
        "ARGUS_SUPERVISOR_READBACK_GRACE_SECONDS": "3",
    }.items():
        monkeypatch.setenv(k, v)
    # An API token of Agent Zero's own environment must never become the daemon's.
    monkeypatch.setenv("ARGUS_SUPERVISOR_API_TOKEN", "agent-zero-env-token-not-the-daemons")
    from app import create_app

    app = create_app(root)
    import argus_supervisor_daemon as daemon

    yield {"root": root, "state": state, "app": app, "daemon": daemon, "sim": sim}
    daemon.stop_all()


@pytest.fixture()
def started(a0):
    """The daemon started through the plugin's startup extension, as Agent Zero starts it; its
    shutdown stack closed at the end (Agent Zero stopping)."""
    from helpers.extension import call_extensions

    stack = contextlib.ExitStack()
    asyncio.run(call_extensions("webui_server_start", runtime=None, shutdown=stack))
    d = a0["daemon"]
    wait_for("the daemon's socket and token", lambda: (a0["state"] / "api-token").exists()
             and (a0["state"] / "api.sock").exists())
    wait_for("the daemon to be ready", lambda: _ready(d))
    yield a0 | {"stack": stack}
    stack.close()


def _ready(d) -> bool:
    try:
        return d.call("GET", "/health", timeout=5)[0] == 200
    except d.DaemonError:
        return False


@pytest.fixture()
def browser(started):
    """A logged-in browser session: Agent Zero's session cookie and its CSRF token."""
    client = started["app"].test_client()
    assert client.post("/login", data={"username": "operator", "password": "pass"}).status_code == 200
    csrf = client.get("/api/csrf_token").get_json()["token"]
    return client, {"X-CSRF-Token": csrf}


def load_tool():
    """The plugin's tool class, loaded from its file as Agent Zero loads tools."""
    from helpers.api import load_classes_from_file
    from helpers.tool import Tool

    (cls,) = load_classes_from_file(PLUGIN / "tools" / "argus_supervisor.py", Tool)
    return cls
