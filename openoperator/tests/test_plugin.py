"""The argus_supervisor plugin under the real OpenOperator (`run_ui.py` of the vendored snapshot):
its real plugin loader, login, CSRF, extension points, notification manager and prompt resolver;
the real daemon on its Unix socket; the simulated remote."""

from __future__ import annotations

import ast
import os
import re
import signal
import subprocess
import sys
import time  # noqa: F401
from pathlib import Path

import requests
import yaml
from conftest import API, PLUGIN, run_in_host, wait_for


def test_the_real_loader_lists_the_plugin_and_only_the_profile_gets_the_tool(a0):
    got = run_in_host(a0, "loader")
    assert "argus_supervisor" in got["listed"] and "argus_supervisor" in got["enabled"]
    assert got["dir"] == str(a0.root / "usr" / "plugins" / "argus_supervisor")
    assert "argus-supervisor" in got["profiles"]
    # The real prompt resolver: the profile's system prompt lists the tool; agent0's does not,
    # and agent0 cannot call it (Agent Zero's lookup answers with its Unknown tool).
    assert "### argus_supervisor" in got["argus-supervisor"]["tools_prompt"]
    assert got["argus-supervisor"]["tool_class"] == "ArgusSupervisor"
    # The tool's prompt lists exactly the verbs the tool offers: each once, none it lacks.
    section = got["argus-supervisor"]["tools_prompt"].split("### argus_supervisor", 1)[1].split("\n### ", 1)[0]
    listed = re.findall(r"^- `([a-z-]+)`:", section, re.M)
    assert sorted(listed) == sorted(got["verbs"]) and len(listed) == len(set(listed)), (listed, got["verbs"])
    assert "argus_supervisor" not in got["agent0"]["tools_prompt"]
    assert got["agent0"]["tool_class"] == "Unknown"
    # The manifest with Agent Zero's field names; the plugin imports as the plugin guide says.
    manifest = yaml.safe_load((PLUGIN / "plugin.yaml").read_text())
    assert set(manifest) <= {"name", "title", "description", "version", "settings_sections",
                             "per_project_config", "per_agent_config", "always_enabled"}
    assert manifest["name"] == PLUGIN.name
    for py in PLUGIN.rglob("*.py"):
        assert not re.search(r"sys\.path\.(insert|append|extend)|sys\.path\s*\+?=", py.read_text()), py


def test_without_the_session_or_the_csrf_token_nothing_reaches_the_daemon(a0):
    anonymous = requests.Session()
    body = {"campaign_id": "x1", "action": "observe", "objective": "t"}
    r = anonymous.post(a0.base + API + "campaign_action", json=body, allow_redirects=False)
    assert r.status_code == 302 and r.headers["Location"].endswith("/login")
    for handler in ("health", "status", "campaigns", "smoke"):
        assert anonymous.get(a0.base + API + handler, allow_redirects=False).status_code == 302, handler
    logged_in = a0.session()
    csrf = logged_in.headers.pop("X-CSRF-Token")
    r = logged_in.post(a0.base + API + "campaign_action", json=body, allow_redirects=False)
    assert r.status_code == 403 and "CSRF" in r.text
    r = logged_in.post(a0.base + API + "campaign_action", json=body, headers={"X-CSRF-Token": "forged"})
    assert r.status_code == 403
    logged_in.headers["X-CSRF-Token"] = csrf
    # The daemon never heard of x1: every refusal above happened in Agent Zero.
    assert a0.daemon_call("GET", "/campaigns/x1")[0] == 404


def test_every_route_of_section_16_drives_a_campaign_to_acceptance_over_the_socket(a0):
    s = a0.session()
    status, health = a0.post(s, "health")
    assert status == 200 and health["status"] == "ok"
    assert a0.post(s, "status")[0] == 200
    assert a0.act(s, "c1", "observe", objective="make the evaluation pass")[0] == 200
    assert a0.post(s, "campaigns")[1]["campaigns"][0]["campaign_id"] == "c1"
    for verb in ("claim", "release", "pause", "resume", "claim"):
        status, answer = a0.act(s, "c1", verb)
        assert status == 200 and answer["outcome"] == "done", (verb, answer)
    assert a0.act(s, "c1", "submit", message="attempt 1")[0] == 200
    # The repair scenario's first attempt fails; the next one passes; the operator accepts it.
    a0.wait_state(s, "c1", "remote_terminal_local_pending")
    assert a0.act(s, "c1", "next-attempt", message="attempt 2")[0] == 200
    a0.wait_state(s, "c1", "remote_terminal_local_pending")
    assert a0.act(s, "c1", "accept", reason="evaluation passes")[1]["outcome"] == "done"
    assert a0.state_of(s, "c1") == "closed.accepted"
    # cancel, on a second campaign's running attempt: the remote's task is cancelled.
    assert a0.act(s, "c2", "observe", objective="second")[0] == 200
    assert a0.act(s, "c2", "claim")[0] == 200
    assert a0.act(s, "c2", "submit", message="go")[0] == 200
    status, answer = a0.act(s, "c2", "cancel", reason="operator stops it")
    assert status in (200, 202) and answer.get("refused_by") is None, answer
    # A refusal is the daemon's, passed on as it is, with who refused.
    status, answer = a0.act(s, "c1", "claim")
    assert status == 409 and answer["refused_by"] == "supervisor", answer
    status, answer = a0.act(s, "c1", "reboot")
    assert status == 400 and answer["refused_by"] == "plugin"
    # The plugin's own gate takes exactly the daemon's verbs and their fields: the verb table the
    # campaign's view lists (`verbs`), which the page reads for what to ask first.
    rows = a0.post(s, "campaigns", {"campaign_id": "c1"})[1]["verbs"]
    assert sorted(r["name"] for r in rows) == sorted(plugin_constant("ACTIONS"))
    assert sorted({f for r in rows for f in r["fields"]}) == sorted(plugin_constant("ACTION_FIELDS"))
    # The events and the feed, through the one-segment handler.
    assert a0.post(s, "campaigns", {"campaign_id": "c1", "part": "events"})[1]["events"]
    feed = a0.post(s, "campaigns", {"campaign_id": "c1", "part": "messages"})[1]["messages"]
    assert any(m["kind"] == "MISSION_COMPLETE" for m in feed)
    # The daemon's token never reaches the browser, and Agent Zero's own is not the daemon's.
    token = (a0.state / "api-token").read_text().strip()
    seen = "".join(s.post(a0.base + API + h, json={}).text for h in ("health", "status", "campaigns"))
    assert token not in seen and token != a0.env["ARGUS_SUPERVISOR_API_TOKEN"]


def plugin_constant(name: str):
    """A constant of the plugin's daemon helper, read from its source (it imports Agent Zero's
    modules, so it is not imported here)."""
    tree = ast.parse((PLUGIN / "helpers" / "argus_supervisor_daemon.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"the plugin's helper has no {name}")


def notifications(a0, s) -> list[dict]:
    r = s.post(a0.base + "/api/notifications_history", json={}, timeout=10)
    assert r.status_code == 200, r.text
    return [n for n in r.json()["notifications"] if "argus-supervisor" in n["detail"]]


def test_only_needs_you_attempts_missions_and_critical_failures_reach_the_real_notifications_once(agent_zero):
    a0 = agent_zero()
    s = a0.session()
    assert a0.act(s, "n1", "observe", objective="train")[0] == 200
    assert a0.act(s, "n1", "claim")[0] == 200
    assert a0.act(s, "n1", "submit", message="attempt 1")[0] == 200
    a0.wait_state(s, "n1", "remote_terminal_local_pending")

    def notified_agrees_with_the_feed():
        feed = a0.post(s, "campaigns", {"campaign_id": "n1", "part": "messages"})[1]["messages"]
        want = [m["kind"] for m in feed if m["kind"] in ("NEEDS_YOU", "ATTEMPT_COMPLETED", "ATTEMPT_FAILED", "ATTEMPT_CANCELED", "MISSION_COMPLETE", "CRITICAL_FAILURE")]
        got = notifications(a0, s)
        return (feed, got) if want and len(got) == len(want) else None

    feed, got = wait_for("the notifier's pass (every 5 s)", notified_agrees_with_the_feed, 40, 0.5)
    kinds = [m["kind"] for m in feed]
    assert "OPERATOR_ACTION" in kinds and "STAGE_TRANSITION" in kinds, kinds  # the feed says more
    # The `repair` scenario's first attempt fails: a failure, notified as an error.
    assert any(n["title"] == "Attempt failed: n1" and n["type"] == "error" for n in got), got
    assert not any(n["title"].startswith("Attempt completed") for n in got), got
    # Agent Zero restarts on the same state root: what was notified is not notified again, while a
    # new attempt's completion is.
    a0.stop()
    again = agent_zero(root=a0.root)
    s2 = again.session()
    assert again.act(s2, "n2", "observe", objective="train")[0] == 200
    assert again.act(s2, "n2", "claim")[0] == 200
    assert again.act(s2, "n2", "submit", message="attempt 1")[0] == 200
    after = wait_for("n2's end to be notified",
                     lambda: [n for n in notifications(again, s2) if n["title"] == "Attempt failed: n2"] and notifications(again, s2),
                     60, 0.5)
    assert not [n for n in after if n["title"].endswith(": n1")], after


def test_startup_migration_starts_exactly_one_daemon_which_stops_and_dies_with_agent_zero(agent_zero):
    a0 = agent_zero()
    pids = a0.daemon_pids()
    assert len(pids) == 1, pids
    pid = pids[0]
    assert "argus-supervisor cannot start" not in a0.log()
    # No TCP listener of the daemon's: its sockets are none of the listening ones.
    sockets = {os.readlink(f"/proc/{pid}/fd/{fd}")[8:-1] for fd in os.listdir(f"/proc/{pid}/fd")
               if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:[")}
    listening = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] == "0A":
                listening.add(cols[9])
    assert sockets and not sockets & listening, "the daemon listens on TCP"
    assert oct(os.stat(a0.state / "api.sock").st_mode & 0o777) == "0o600"
    # Killed outright: restarted (backoff 1 s), still one.
    os.kill(pid, signal.SIGKILL)
    wait_for("a restart", lambda: len(a0.daemon_pids()) == 1 and a0.daemon_pids()[0] != pid)
    wait_for("the restarted daemon to answer", a0.daemon_ready, 30, 0.3)
    restarted = a0.daemon_pids()[0]
    # Agent Zero stopped as a container stops it (SIGTERM): the daemon stops with it and removes
    # its socket.
    a0.stop(signal.SIGTERM)
    wait_for("the daemon to stop", lambda: not Path(f"/proc/{restarted}").exists(), 20)
    wait_for("the socket to go", lambda: not (a0.state / "api.sock").exists(), 15)
    # Agent Zero killed outright (SIGKILL): the daemon dies with it (PR_SET_PDEATHSIG).
    b = agent_zero(root=a0.root)
    (child,) = b.daemon_pids()
    b.proc.kill()
    b.proc.wait()
    wait_for("the orphaned daemon to go", lambda: not Path(f"/proc/{child}").exists()
             or Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z", 20)


def test_the_profiles_tool_answers_through_the_daemon_and_never_blocks_agent_zeros_loop(a0, tmp_path):
    s = a0.session()
    assert a0.act(s, "t1", "observe", objective="train")[0] == 200
    say = lambda **args: run_in_host(a0, "tool", args)
    assert "t1: observing.detached" in say(action="status")
    assert say(action="claim", campaign_id="t1").startswith("claim → 200")
    shown = say(action="show", campaign_id="t1")
    assert "controlling.ready" in shown and "lease: epoch" in shown
    assert "claim" in say(action="explain", campaign_id="t1")
    assert say(action="answer", campaign_id="t1", message="x").startswith(
        "answer → 409 (refused by supervisor): answer: refused here (nothing_pending)")
    assert say(action="claim", campaign_id="t1").startswith("claim → 409 (refused by supervisor)")
    assert "campaign_id is required" in say(action="claim")
    # A daemon that accepts and never answers: the call ends at its bound, and the event loop
    # (a 10 ms ticker beside it) keeps running meanwhile.
    silent = tmp_path / "silent"
    silent.mkdir()
    (silent / "api-token").write_text("t")
    listener = subprocess.Popen([sys.executable, "-c", (
        "import socket,time,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8);"
        "c=[]\nwhile True: c.append(s.accept())"), str(silent / "api.sock")])
    try:
        wait_for("the silent socket", lambda: (silent / "api.sock").exists())
        got = run_in_host(a0, "tool_beside_a_ticker", {"action": "status"},
                          env={"ARGUS_SUPERVISOR_HOME": str(silent)})
    finally:
        listener.kill()
    assert got["message"].startswith("argus-supervisor is not answering"), got
    assert 14 <= got["elapsed"] <= 25, got  # call_timeout_seconds: 15
    assert got["ticks"] >= 0.25 * got["elapsed"] / 0.01, got  # blocked, it would be ~0


def test_operator_actions_fail_closed_on_an_open_host_and_reads_still_answer(agent_zero):
    # No login configured: Agent Zero lets everyone through; the plugin does not.
    open_host = agent_zero(login=False)
    s = open_host.session()
    status, answer = open_host.act(s, "o1", "observe", objective="t")
    assert status == 403 and answer["refused_by"] == "plugin" and answer["error"]["code"] == "host_auth_off", answer
    assert "AUTH_LOGIN" in answer["error"]["message"] and "ARGUS_SUPERVISOR_PLUGIN_ALLOW_OPEN_HOST" in answer["error"]["message"]
    assert open_host.post(s, "health")[0] == 200 and open_host.post(s, "campaigns")[0] == 200
    assert open_host.daemon_call("GET", "/campaigns/o1")[0] == 404
    open_host.stop()
    # The risk accepted explicitly: the action goes through.
    accepted = agent_zero(login=False, env={"ARGUS_SUPERVISOR_PLUGIN_ALLOW_OPEN_HOST": "1"})
    s = accepted.session()
    assert accepted.act(s, "o2", "observe", objective="t")[0] == 200
    accepted.stop()


def test_a_build_that_skips_auth_on_hf_spaces_does_not_open_the_plugin(agent_zero, tmp_path):
    """A double of the OpenOperator builds that skip Agent Zero's auth on Hugging Face Spaces (their
    `ApiHandler.requires_auth()` is False and their decorators return early when HF_SPACE=true):
    the snapshot's helpers/api.py patched to behave so, the rest real."""
    a0 = agent_zero(start=False)
    api = a0.root / "helpers" / "api.py"
    text = api.read_text()
    for name in ("requires_auth", "csrf_protect", "requires_api_key", "requires_loopback"):
        head = f"def {name}(f):\n    @wraps(f)\n    async def decorated(*args, **kwargs):\n"
        assert head in text, name
        text = text.replace(head, head + "        if __import__('os').environ.get('HF_SPACE') == 'true':\n"
                                         "            return await f(*args, **kwargs)\n")
    api.write_text(text)
    a0.env["HF_SPACE"] = "true"
    a0.start()
    wait_for("the daemon to be ready", a0.daemon_ready, 60, 0.3)
    anonymous = requests.Session()
    # The patched host lets an anonymous request through to the handler…
    r = anonymous.post(a0.base + API + "health", json={})
    assert r.status_code == 200, r.text
    # …and the plugin still refuses the action: no session holds the login.
    r = anonymous.post(a0.base + API + "campaign_action", json={"campaign_id": "h1", "action": "observe", "objective": "t"})
    assert r.status_code == 403 and r.json()["refused_by"] == "plugin" and r.json()["error"]["code"] == "host_auth_skipped", r.text
    # Logged in but without the CSRF token: refused too.
    s = a0.session()
    csrf = s.headers.pop("X-CSRF-Token")
    status, answer = a0.act(s, "h1", "observe", objective="t")
    assert status == 403 and answer["error"]["code"] == "host_csrf_skipped", answer
    assert a0.daemon_call("GET", "/campaigns/h1")[0] == 404
    s.headers["X-CSRF-Token"] = csrf
    assert a0.act(s, "h1", "observe", objective="t")[0] == 200


def test_the_live_smoke_reports_every_check_of_section_20_and_leaks_no_secret(agent_zero):
    venvs = Path(os.environ.get("ARGUS_INTEROP_VENVS", "/var/tmp/argus-supervisor-venvs"))
    argus = venvs / "argus-skill-0.1.2" / "bin" / "argus-plugin-server"
    assert argus.is_file(), f"{argus} (scripts/test.sh installs the vendored argus-skill)"
    a0 = agent_zero(env={"ARGUS_SUPERVISOR_ARGUS_BIN": str(argus)}, ready=False)
    s = a0.session()

    def failed(report) -> list[str]:
        return [c["check"] for c in report.get("checks", []) if c.get("result") == "FAIL"]

    # Before any campaign, nothing proves the heartbeat: the smoke fails on it alone, and says why.
    idle = wait_for("the smoke to fail on the heartbeat alone",
                    lambda: (lambda r: r if failed(r) == ["heartbeat"] else None)(a0.post(s, "smoke")[1]), 60, 1)
    heartbeat = next(c for c in idle["checks"] if c["check"] == "heartbeat")
    assert "no campaign has ticked yet" in heartbeat["evidence"], heartbeat
    assert a0.act(s, "m1", "observe", objective="train")[0] == 200

    def smoke():
        status, report = a0.post(s, "smoke")
        return report if status == 200 else None

    report = wait_for("every smoke check to pass", smoke, 60, 1)
    by = {c["check"]: c for c in report["checks"]}
    assert set(by) == {"plugin_loaded", "profile_discoverable", "argus_runtime", "heartbeat",
                       "capability_probe", "secret_masking", "no_second_listener"}
    assert "argus-skill 0.1.2" in by["argus_runtime"]["evidence"]
    assert "submit" in by["capability_probe"]["evidence"]
    assert by["secret_masking"]["evidence"].startswith(("2 known", "3 known", "4 known"))
    # The same from the command line, in the Agent Zero root, as an operator runs it.
    done = subprocess.run([sys.executable, "-m", "usr.plugins.argus_supervisor.helpers.smoke"],
                          cwd=a0.root, env=a0.host_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "smoke: every check passed" in done.stdout, done.stdout + done.stderr
    # No secret in any answer, the command's output, or the daemon's log.
    token = (a0.state / "api-token").read_text().strip()
    seen = done.stdout + done.stderr + (a0.state / "daemon.log").read_text() + str(report)
    for secret in (token, a0.env["OPENTRAINING_A2A_TOKEN"], a0.env["ARGUS_SUPERVISOR_API_TOKEN"]):
        assert secret not in seen
    # A leaked secret is found: the daemon's token written into its log fails the check.
    with open(a0.state / "daemon.log", "a") as f:
        f.write(f"oops {token}\n")
    status, report = a0.post(s, "smoke")
    assert status == 503 and not report["ok"]
    leak = next(c for c in report["checks"] if c["check"] == "secret_masking")
    assert leak["result"] == "FAIL" and token not in str(report)


def test_the_daemons_log_copy_stays_bounded_and_keeps_the_newest_lines(tmp_path):
    """`daemon.log` (read by the smoke's secret check) is cut to its newest half past 1 MiB."""
    import importlib.util
    import io

    spec = importlib.util.spec_from_file_location(
        "argus_supervisor_daemon", PLUGIN / "helpers" / "argus_supervisor_daemon.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cfg = {"state_root": tmp_path}
    lines = b"".join(b"line %06d of the daemon's log, long enough to add up quickly\n" % i for i in range(40000))
    assert len(lines) > 2 * module.LOG_MAX_BYTES
    module.Daemon(cfg)._copy_log(io.BytesIO(lines))
    kept = (tmp_path / "daemon.log").read_bytes()
    assert len(kept) <= module.LOG_MAX_BYTES
    assert kept.endswith(b"line 039999 of the daemon's log, long enough to add up quickly\n")


def test_writes_wait_for_a_qualified_remote_and_qualify_run_in_the_host_lets_them_through(agent_zero, binary):
    """The daemon's default policy inside the host: a claim is refused by the supervisor
    (`unqualified_remote`, naming the command), nothing is written; `argus-supervisor qualify`,
    run in the Agent Zero root on the daemon's state root, keeps a passing record; the same claim
    is then done, and health says `passed`."""
    a0 = agent_zero(scenario="long-noisy", env={"ARGUS_SUPERVISOR_REQUIRE_QUALIFICATION": "1"})
    s = a0.session()
    assert a0.act(s, "q1", "observe", objective="train")[0] == 200
    status, answer = a0.act(s, "q1", "claim")
    assert status == 409, answer
    assert answer["refused_by"] == "supervisor" and answer["code"] == "unqualified_remote", answer
    assert "argus-supervisor qualify" in answer["message"], answer
    health = a0.post(s, "health")[1]
    assert health["remote"]["qualification_required"] is True, health
    assert health["remote"]["qualification"]["status"] == "none", health
    probe = {c["check"]: c for c in a0.post(s, "smoke")[1]["checks"]}["capability_probe"]
    assert "the card enables writes: True" in probe["evidence"], probe
    assert "writes go now: False" in probe["evidence"], probe
    done = subprocess.run(
        [binary, "qualify", "--allow-insecure-loopback", "--home", str(a0.state),
         "--write-campaign", "qualification-test", "--message", "harmless: say hello",
         "--deployment", f"unix:{a0.state / 'api.sock'}"],
        cwd=a0.root, env=a0.host_env(), capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "**Verdict: QUALIFIED**" in done.stdout
    # §25's deployment part, read from the plugin's running daemon over its socket.
    assert "| /health SHA match | yes |" in done.stdout, done.stdout
    assert f"| State root | {a0.state} |" in done.stdout, done.stdout
    # The operator's routine before an upgrade, as the README gives it inside OpenOperator: a
    # backup through the plugin's daemon on its socket (its own token, read from the state root).
    done = subprocess.run(
        [binary, "backup", "--url", f"unix:{a0.state / 'api.sock'}", "--home", str(a0.state)],
        cwd=a0.root, env=a0.host_env(), capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0 and done.stdout.startswith("backup: done;"), done.stdout + done.stderr
    archive = done.stdout.strip().rsplit(" in ", 1)[1]
    assert archive.startswith(str(a0.state / "backups")), archive
    assert a0.env["OPENTRAINING_A2A_TOKEN"] not in done.stdout + done.stderr
    status, answer = a0.act(s, "q1", "claim")
    assert status == 200 and answer["outcome"] == "done", answer
    assert a0.post(s, "health")[1]["remote"]["qualification"]["status"] == "passed"
    probe = {c["check"]: c for c in a0.post(s, "smoke")[1]["checks"]}["capability_probe"]
    assert "writes go now: True" in probe["evidence"], probe
