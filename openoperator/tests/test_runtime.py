"""The deployment's promises (§5, §20, §22), proven by running it as the image runs it: the real
OpenOperator with the plugin, the daemon and the real Argus runtime as UID 1000, the Agent Zero
root owned by root except its `usr` and `tmp` (as /a0/usr is the user's in the image); a whole
supervision run, with Argus deciding (only its model CLI a double: the scripted stand-in). Then the
§20 live smoke, run as that user, passes, and fails on each of its checks when that one thing is
broken on purpose."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import install, required_env, wait_for

UID = 1000
SMOKE = [sys.executable, "-m", "usr.plugins.argus_supervisor.helpers.smoke"]


def tree_digest(root: Path, skip: tuple[Path, ...] = ()) -> dict[str, str]:
    """Every file under `root` (but `skip`): its path and the sha256 of its content."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if here / d not in skip]
        for name in filenames:
            p = here / name
            if p.is_symlink() or not p.is_file():
                continue
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def family(pid: int) -> list[int]:
    """`pid` and every process descended from it."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def listening_ports(pids: list[int]) -> set[int]:
    """The TCP ports these processes listen on, read from /proc/net/tcp* (not from configuration)."""
    inodes = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            cols = row.split()
            if cols[3] == "0A" and cols[9] in inodes:
                ports.add(int(cols[1].rsplit(":", 1)[1], 16))
    return ports


def uids(pid: int) -> set[int]:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return {int(x) for x in line.split()[1:]}
    return set()


@pytest.fixture()
def base():
    """A directory UID 1000 can reach (pytest's own temp directory is root's alone)."""
    path = Path(tempfile.mkdtemp(prefix="argus-uid1000-", dir="/var/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="starts OpenOperator as UID 1000, which needs root")
def test_as_uid_1000_the_host_venv_is_untouched_one_port_listens_and_the_smoke_catches_each_break(agent_zero, base):
    repo = Path(__file__).resolve().parents[2]
    venvs = Path(required_env("ARGUS_INTEROP_VENVS"))
    root = base / "a0"
    install(root, Path(required_env("ARGUS_OPENOPERATOR_TREE")))
    (base / "standin").mkdir()
    claude = base / "standin" / "claude"
    claude.write_text(f"#!/bin/sh\nSTANDIN_DIR={base / 'standin'} exec {sys.executable} "
                      f"{repo / 'tests/interop/servers/claude_standin.py'} \"$@\"\n")
    claude.chmod(0o755)
    a0 = agent_zero(scenario="repair", root=root, start=False, env={
        "HOME": str(base / "home"),
        "ARGUS_SUPERVISOR_ARGUS_BIN": str(venvs / "argus-skill-0.1.2/bin/argus-plugin-server"),
        "ARGUS_SUPERVISOR_BACKEND": "claude",
        "ARGUS_SUPERVISOR_ARGUS_POLL_SECONDS": "1",
        "PATH": f"{base / 'standin'}:{os.environ['PATH']}",
    })
    a0.user = UID
    # Its process adopts orphans, as the container's PID 1 does: the walk below finds the Argus
    # daemon, which double-forks away from the supervisor that started it.
    a0.subreaper = True
    # usr and tmp are the user's, as in the image; logs is Agent Zero's own (its HTML log).
    for mine in (root / "usr", root / "tmp", root / "logs", base / "home", base / "standin"):
        mine.mkdir(parents=True, exist_ok=True)
        subprocess.run(["chown", "-R", f"{UID}:{UID}", str(mine)], check=True)
    host_venv = Path(sys.prefix)
    venv_before = tree_digest(host_venv)
    outside_before = tree_digest(root, skip=(root / "usr", root / "tmp", root / "logs"))
    image_before = tree_digest(base / "a0-image-plugin")

    a0.start()
    wait_for("the daemon to be ready", a0.daemon_ready, 60, 0.3)
    s = a0.session()
    assert a0.act(s, "u1", "observe", objective="make the evaluation pass")[0] == 200
    assert a0.act(s, "u1", "claim")[0] == 200
    assert a0.act(s, "u1", "submit", message="attempt 1")[0] == 200

    # Every process of the deployment, sampled through the whole run (a process that lives only
    # while Argus decides is seen too): its command line, its UIDs and the TCP ports it listens on.
    seen: dict[int, tuple[str, set[int]]] = {}
    ports: set[int] = set()
    # The deployment's Argus daemons, found by what they are (not by the walk) to hold the walk
    # to them: each must be in the family when it is found.
    argus_daemons: set[int] = set()
    strays: set[int] = set()
    # Argus's home is the deployment's default, under usr (§5.2), as in the image.
    mark = f"ARGUS_SKILL_HOME={a0.state / 'argus-home'}".encode()

    def sample() -> None:
        procs = family(a0.proc.pid)
        for entry in Path("/proc").iterdir():
            try:
                if (entry.name.isdigit() and b"argus_skill.daemon" in (entry / "cmdline").read_bytes()
                        and mark in (entry / "environ").read_bytes().split(b"\0")):
                    argus_daemons.add(int(entry.name))
                    if int(entry.name) not in procs:
                        strays.add(int(entry.name))
            except OSError:
                continue
        for p in procs:
            try:
                cmd = Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                seen.setdefault(p, (cmd, uids(p)))
            except OSError:
                continue  # gone meanwhile
        ports.update(listening_ports(procs))

    def closed() -> bool:
        sample()
        return a0.post(s, "campaigns", {"campaign_id": "u1"})[1].get("state") == "closed.accepted"

    wait_for("Argus to decide the repair and the campaign to close", closed, 180, 0.5)

    # Everything the deployment ran is UID 1000's, none of it sudo: the daemon, the Argus runtime,
    # and the Argus daemon that double-forked away from it (adopted, as in a container).
    cmdlines = {p: c for p, (c, _) in seen.items()}
    assert any(" serve " in c for c in cmdlines.values()), cmdlines
    assert any("argus-plugin-server" in c for c in cmdlines.values()), cmdlines
    assert argus_daemons and not strays, (argus_daemons, strays, cmdlines)
    for p, (c, ids) in seen.items():
        assert ids == {UID}, (p, c, ids)
    assert not [c for c in cmdlines.values() if "sudo" in c.split()], cmdlines
    # The only TCP listener, at any time, is the host's port.
    assert ports == {a0.port}, (ports, cmdlines)
    # The state lives under usr: the daemon's socket and documents are UID 1000's.
    assert a0.state.stat().st_uid == UID and (a0.state / "api.sock").stat().st_uid == UID

    # A campaign that goes on ticking (u1 is closed): only a campaign seen ticking proves the
    # heartbeat to the smoke.
    assert a0.act(s, "u2", "observe", objective="watch the heartbeat")[0] == 200
    wait_for("a tick of u2", lambda: (a0.post(s, "health")[1].get("heartbeat") or {})
             .get("last_tick_age_seconds") in (0, 1), 30, 0.5)

    # The §20 smoke, as UID 1000 in the deployment's root: every check passes.
    def smoke(**env) -> tuple[int, str]:
        done = subprocess.run(SMOKE, cwd=root, env=a0.host_env({"PYTHONDONTWRITEBYTECODE": "1", **env}),
                              capture_output=True, text=True, timeout=120, user=UID, group=UID, extra_groups=[])
        return done.returncode, done.stdout + done.stderr

    code, said = smoke()
    assert code == 0 and "smoke: every check passed" in said, said

    def fails_only(check: str, also: tuple[str, ...] = (), **env) -> None:
        """The smoke fails on `check` (and what follows from it, `also`), and on nothing else."""
        code, said = smoke(**env)
        failed = [line.split()[1].rstrip(":") for line in said.splitlines() if line.startswith("FAIL")]
        assert code == 1 and failed == [check, *also], (check, said)

    plugin = root / "usr" / "plugins" / "argus_supervisor"
    # The plugin switched off (Agent Zero's own toggle file).
    (plugin / ".toggle-0").write_text("")
    fails_only("plugin_loaded", also=("profile_discoverable",))  # the profile comes with the plugin
    (plugin / ".toggle-0").unlink()
    # The profile gone from the plugin.
    profile = plugin / "agents" / "argus-supervisor" / "agent.yaml"
    profile.rename(profile.with_suffix(".off"))
    fails_only("profile_discoverable")
    profile.with_suffix(".off").rename(profile)
    # The Argus runtime missing.
    fails_only("argus_runtime", ARGUS_SUPERVISOR_ARGUS_BIN=str(base / "no-such-runtime"))
    # A secret in the daemon's log.
    token = (a0.state / "api-token").read_text().strip()
    log = a0.state / "daemon.log"
    kept = log.read_text()
    with open(log, "a") as f:
        f.write(f"oops {token}\n")
    fails_only("secret_masking")
    log.write_text(kept)
    # The daemon's socket open to others.
    sock = a0.state / "api.sock"
    sock.chmod(0o666)
    fails_only("no_second_listener")
    sock.chmod(0o600)
    # The daemon hung.
    (daemon_pid,) = a0.daemon_pids()
    os.kill(daemon_pid, signal.SIGSTOP)
    try:
        fails_only("heartbeat")
    finally:
        os.kill(daemon_pid, signal.SIGCONT)
    code, said = smoke()
    assert code == 0, said
    # No secret in anything the smoke said.
    for secret in (token, a0.env["OPENTRAINING_A2A_TOKEN"]):
        assert secret not in said
    # OpenTraining gone (its process killed): its card does not answer now.
    remote_port = int(a0.remote_url.rstrip("/").rsplit(":", 1)[1])
    (sim,) = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()
              and b"sim" in (p / "cmdline").read_bytes().split(b"\0")[1:2]
              and remote_port in listening_ports([int(p.name)])]
    os.kill(sim, signal.SIGKILL)
    fails_only("capability_probe")

    a0.stop()
    # The host's venv is byte for byte as before the whole run; nothing outside usr and tmp changed.
    assert tree_digest(host_venv) == venv_before
    outside_after = tree_digest(root, skip=(root / "usr", root / "tmp", root / "logs"))
    changed = {k for k in outside_before.keys() | outside_after.keys() if outside_before.get(k) != outside_after.get(k)}
    assert not changed, sorted(changed)[:20]
    # Argus kept its state under usr, and nothing of the deployment's went to $HOME.
    assert (a0.state / "argus-home").is_dir()
    assert not list((base / "home").iterdir()), sorted(str(p) for p in (base / "home").rglob("*"))[:20]
    assert tree_digest(base / "a0-image-plugin") == image_before
