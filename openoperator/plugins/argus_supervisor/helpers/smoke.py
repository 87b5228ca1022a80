"""§20's live smoke, run inside the deployment: is the supervisor really there, and safe?

Checks (each PASS or FAIL with its evidence; never a secret's value):
- `plugin_loaded`: Agent Zero's plugin loader lists `argus_supervisor` and it is enabled.
- `profile_discoverable`: `get_agents_dict()` has the `argus-supervisor` profile.
- `argus_runtime`: the daemon says the Argus runtime is present, and its version is read from the
  runtime's own venv (`ARGUS_SUPERVISOR_ARGUS_BIN`'s).
- `heartbeat`: the daemon answers, and a campaign was seen ticking within three periods. With no
  campaign ticked yet there is nothing that proves the heartbeat, and the check says so (observe
  one, then run the smoke again).
- `capability_probe`: OpenTraining's card answers now (fetched here, from `OPENTRAINING_A2A_URL`'s
  well-known paths) and the daemon discovered it; what it offers, whether the card enables writes,
  the remote's qualification, and whether writes would go now.
- `secret_masking`: no known secret (OpenTraining's token, the daemon's API token, and every other
  `*_TOKEN`/`*_KEY`/`*_SECRET`/`*_PASSWORD` of this process) appears in the daemon's answers or in
  `daemon.log`.
- `no_second_listener`: the daemon holds no listening TCP socket; its Unix socket is mode 0600.

Used by the plugin's `smoke` handler and, from the Agent Zero root, as a command:
`python -m usr.plugins.argus_supervisor.helpers.smoke [--json]` (exit 0 when every check passes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from usr.plugins.argus_supervisor.helpers import argus_supervisor_daemon as daemon

PROFILE = "argus-supervisor"
PLUGIN = "argus_supervisor"
SECRET_SUFFIXES = ("_TOKEN", "_KEY", "_SECRET", "_PASSWORD")


def _check(name: str, ok: bool, evidence: str) -> dict[str, Any]:
    return {"check": name, "result": "PASS" if ok else "FAIL", "evidence": evidence}


def _secrets(cfg: dict[str, Any]) -> list[str]:
    values = [v for k, v in os.environ.items() if k.endswith(SECRET_SUFFIXES) and len(v) >= 8]
    try:
        values.append(daemon.token(cfg))
    except daemon.DaemonError:
        pass
    return sorted(set(values))


def _listening_inodes() -> set[str]:
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if len(cols) > 9 and cols[3] == "0A":  # TCP_LISTEN
                found.add(cols[9])
    return found


def _socket_inodes(pid: int) -> set[str]:
    out = set()
    fds = Path(f"/proc/{pid}/fd")
    for fd in fds.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            out.add(target[8:-1])
    return out


def _argus_version() -> str | None:
    binary = os.environ.get("ARGUS_SUPERVISOR_ARGUS_BIN")
    if not binary:
        return None
    python = Path(binary).parent / "python"
    try:
        done = subprocess.run(
            [str(python), "-c", "import importlib.metadata as m; print(m.version('argus-skill'))"],
            capture_output=True, text=True, timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def _card_now() -> str | None:
    """None when OpenTraining's agent card answers now (JSON, HTTP 200); else why not (a class,
    never the URL: Agent Zero's A2A server carries its token in the path)."""
    import urllib.error
    import urllib.request

    base = os.environ.get("OPENTRAINING_A2A_URL", "")
    if not base:
        return "OPENTRAINING_A2A_URL is not set"
    headers = {"Accept": "application/json"}
    if os.environ.get("OPENTRAINING_A2A_TOKEN"):
        headers["Authorization"] = "Bearer " + os.environ["OPENTRAINING_A2A_TOKEN"]
    why = "no answer"
    for path in (".well-known/agent-card.json", ".well-known/agent.json"):
        url = base.rstrip("/") + "/" + path
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as r:
                if isinstance(json.loads(r.read(1 << 20)), dict):
                    return None
                why = "not a card"
        except urllib.error.HTTPError as e:
            why = f"HTTP {e.code}"
        except (OSError, ValueError) as e:
            why = e.__class__.__name__
    return why


def _daemon_pid(cfg: dict[str, Any]) -> int | None:
    running = daemon._running.get("daemon")
    if running is not None and running.proc is not None and running.proc.poll() is None:
        return running.proc.pid
    # Run as a command: the daemon whose command line names this state root.
    want = str(cfg["state_root"])
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        args = [a.decode("utf-8", "replace") for a in argv]
        if "serve" in args and "--home" in args and want in args:
            return int(entry.name)
    return None


def run(cfg: dict[str, Any] | None = None) -> dict[str, Any]:
    cfg = cfg or daemon.config()
    checks = []

    from helpers import plugins, subagents

    listed = PLUGIN in plugins.get_plugins_list()
    enabled = PLUGIN in plugins.get_enabled_plugins(None)
    checks.append(_check("plugin_loaded", listed and enabled,
                         f"listed: {listed}; enabled: {enabled}; at {plugins.find_plugin_dir(PLUGIN)}"))
    profiles = subagents.get_agents_dict()
    checks.append(_check("profile_discoverable", PROFILE in profiles,
                         f"profiles: {', '.join(sorted(profiles))}"))

    answers: list[str] = []
    try:
        status, health = daemon.call("GET", "/health", timeout=10, cfg=cfg)
        answers.append(json.dumps(health))
        for path in ("/status", "/campaigns"):
            answers.append(json.dumps(daemon.call("GET", path, timeout=10, cfg=cfg)[1]))
    except daemon.DaemonError as e:
        status, health = 0, None
        checks.append(_check("heartbeat", False, str(e)))
    if health is not None:
        present = bool(health.get("argus_runtime_present"))
        version = _argus_version() if present else None
        checks.append(_check("argus_runtime", present and version is not None,
                             f"present: {present}; argus-skill {version or 'version unknown'}"))
        beat = health.get("heartbeat") or {}
        age, period = beat.get("last_tick_age_seconds"), beat.get("seconds") or 0
        # Only a campaign seen ticking proves the heartbeat: a daemon with none has nothing to tick.
        fresh = age is not None and age <= 3 * max(period, 1)
        seen = (f"ticks {beat.get('ticks')}; last {age} s ago" if age is not None else
                f"no campaign has ticked yet ({health.get('campaigns', 0)} campaign(s)): observe one, "
                "then run the smoke again")
        checks.append(_check("heartbeat", fresh,
                             f"readiness {health.get('status')} ({status}); {seen}; period {period} s; reasons: "
                             + (", ".join(r.get("class", "?") for r in health.get("reasons", [])) or "none")))
        remote = health.get("remote") or {}
        can = remote.get("can") or []
        discovered = bool(remote.get("card_sha256") or can)
        # Whether writes would go now: the card must enable them and, while the daemon requires
        # it (its default), `argus-supervisor qualify` must have passed this card.
        qualification = remote.get("qualification") or {}
        required = bool(remote.get("qualification_required"))
        card_writes = bool(remote.get("mutation_enabled"))
        writes_now = card_writes and (not required or qualification.get("status") == "passed")
        missing = _card_now()
        checks.append(_check("capability_probe", discovered and missing is None,
                             f"the card answers now: {'yes' if missing is None else 'no (' + missing + ')'}; "
                             f"card sha256 {remote.get('card_sha256') or 'none'}; can: {', '.join(can) or 'nothing'}; "
                             f"the card enables writes: {card_writes}; "
                             f"qualification: {qualification.get('detail') or 'none'}"
                             f"{' (required)' if required else ' (not required)'}; "
                             f"writes go now: {writes_now}"))

    secrets = _secrets(cfg)
    log = cfg["state_root"] / "daemon.log"
    try:
        logged = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        logged = ""
    leaked = [i for i, s in enumerate(secrets) if any(s in a for a in answers) or s in logged]
    checks.append(_check("secret_masking", not leaked,
                         f"{len(secrets)} known secrets; {len(answers)} answers and {len(logged)} log bytes read; "
                         f"{len(leaked)} found"))

    pid = _daemon_pid(cfg)
    sock = cfg["state_root"] / cfg["socket"]
    if pid is None:
        checks.append(_check("no_second_listener", False, "the daemon's process was not found"))
    else:
        tcp = _socket_inodes(pid) & _listening_inodes()
        try:
            mode = oct(sock.stat().st_mode & 0o777)
        except OSError:
            mode = "missing"
        checks.append(_check("no_second_listener", not tcp and mode == "0o600",
                             f"daemon pid {pid}: {len(tcp)} listening TCP sockets; Unix socket {mode}"))

    return {"ok": all(c["result"] == "PASS" for c in checks), "checks": checks}


def main(argv: list[str]) -> int:
    report = run()
    if "--json" in argv:
        print(json.dumps(report, indent=2))
    else:
        for c in report["checks"]:
            print(f"{c['result']:4}  {c['check']}: {c['evidence']}")
        print("smoke: " + ("every check passed" if report["ok"] else "FAILED"))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
