"""The argus_supervisor plugin against the real daemon over its Unix socket, on the simulated
remote, under the Agent Zero stand-in (Agent Zero itself needs Python >= 3.12; see
openoperator/standin/README.md)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import time
from pathlib import Path

import yaml
from conftest import PLUGIN, OPENOPERATOR, wait_for

API = "/api/plugins/argus_supervisor/"


def post(browser, handler, body=None):
    client, headers = browser
    r = client.post(API + handler, json=body or {}, headers=headers)
    return r.status_code, r.get_json(silent=True)


def act(browser, cid, action, **fields):
    return post(browser, "campaign_action", {"campaign_id": cid, "action": action, **fields})


def state(browser, cid):
    return post(browser, "campaigns", {"campaign_id": cid})[1]["state"]


def wait_state(browser, cid, want):
    wait_for(f"{cid} to reach {want}", lambda: state(browser, cid) == want)


def test_the_manifest_and_the_profile_parse_with_agent_zeros_field_names():
    manifest = yaml.safe_load((PLUGIN / "plugin.yaml").read_text())
    assert set(manifest) <= {"name", "title", "description", "version", "settings_sections",
                             "per_project_config", "per_agent_config", "always_enabled"}
    assert re.fullmatch(r"[a-z0-9_]+", manifest["name"]) and manifest["name"] == PLUGIN.name
    assert manifest["title"] and manifest["description"] and manifest["version"]
    for handler in ("health", "status", "campaigns", "campaign_action"):
        assert (PLUGIN / "api" / f"{handler}.py").is_file(), handler
    profile = OPENOPERATOR / "agents" / "argus-supervisor"
    agent = yaml.safe_load((profile / "agent.yaml").read_text())
    assert set(agent) == {"title", "description", "context", "enabled"} and agent["enabled"] is True
    for f in ("AGENTS.md", "prompts/agent.system.main.role.md",
              "prompts/agent.system.main.specifics.md", "skills/argus-supervision/SKILL.md"):
        assert (profile / f).read_text().strip(), f
    skill = (profile / "skills/argus-supervision/SKILL.md").read_text()
    front = yaml.safe_load(skill.split("---")[1])
    assert front["name"] == "argus-supervision" and front["description"]


def test_without_the_session_or_the_csrf_token_nothing_reaches_the_daemon(started):
    app, d = started["app"], started["daemon"]
    anonymous = app.test_client()
    r = anonymous.post(API + "campaign_action", json={"campaign_id": "x1", "action": "observe", "objective": "t"})
    assert r.status_code == 302 and r.headers["Location"].endswith("/login")
    for handler in ("health", "status", "campaigns"):
        assert anonymous.get(API + handler).status_code == 302, handler
    logged_in = app.test_client()
    logged_in.post("/login", data={"username": "operator", "password": "pass"})
    r = logged_in.post(API + "campaign_action", json={"campaign_id": "x1", "action": "observe", "objective": "t"})
    assert r.status_code == 403 and b"CSRF" in r.data
    r = logged_in.post(API + "campaign_action", json={"campaign_id": "x1", "action": "observe", "objective": "t"},
                       headers={"X-CSRF-Token": "forged"})
    assert r.status_code == 403
    # The daemon never heard of x1: every refusal above happened before it was reached.
    assert d.call("GET", "/campaigns/x1")[0] == 404


def test_every_route_of_section_16_drives_a_campaign_to_acceptance_over_the_socket(browser, started):
    d = started["daemon"]
    status, health = post(browser, "health")
    assert status == 200 and health["status"] == "ok"
    assert post(browser, "status")[0] == 200
    assert act(browser, "c1", "observe", objective="make the evaluation pass")[0] == 200
    assert post(browser, "campaigns")[1]["campaigns"][0]["campaign_id"] == "c1"
    for verb in ("claim", "release", "pause", "resume", "claim"):
        status, answer = act(browser, "c1", verb)
        assert status == 200 and answer["outcome"] == "done", (verb, answer)
    assert act(browser, "c1", "submit", message="attempt 1")[0] == 200
    # The repair scenario's first attempt fails; the next one passes; the operator accepts it.
    wait_state(browser, "c1", "remote_terminal_local_pending")
    assert act(browser, "c1", "next-attempt", message="attempt 2")[0] == 200
    wait_state(browser, "c1", "remote_terminal_local_pending")
    assert act(browser, "c1", "accept", reason="evaluation passes")[1]["outcome"] == "done"
    assert state(browser, "c1") == "closed.accepted"
    # cancel, on a second campaign's running attempt: the remote's task is cancelled.
    assert act(browser, "c2", "observe", objective="second")[0] == 200
    assert act(browser, "c2", "claim")[0] == 200
    assert act(browser, "c2", "submit", message="go")[0] == 200
    status, answer = act(browser, "c2", "cancel", reason="operator stops it")
    assert status in (200, 202) and answer.get("refused_by") is None, answer
    # A refusal is the daemon's, passed on as it is, with who refused.
    status, answer = act(browser, "c1", "claim")
    assert status == 409 and answer["refused_by"] == "supervisor", answer
    status, answer = act(browser, "c1", "reboot")
    assert status == 400 and answer["refused_by"] == "plugin"
    # The events and the feed, through the one-segment handler.
    assert post(browser, "campaigns", {"campaign_id": "c1", "part": "events"})[1]["events"]
    feed = post(browser, "campaigns", {"campaign_id": "c1", "part": "messages"})[1]["messages"]
    assert any(m["kind"] == "MISSION_COMPLETE" for m in feed)
    # The daemon's token never reaches the browser.
    token = (started["state"] / "api-token").read_text().strip()
    client, headers = browser
    seen = "".join(client.post(API + h, json={}, headers=headers).get_data(as_text=True)
                   for h in ("health", "status", "campaigns"))
    assert token not in seen
    assert "agent-zero-env-token-not-the-daemons" != token


def test_only_needs_you_attempts_missions_and_critical_failures_are_notified_once(browser, started):
    d = started["daemon"]
    assert act(browser, "n1", "observe", objective="train")[0] == 200
    assert act(browser, "n1", "claim")[0] == 200
    assert act(browser, "n1", "submit", message="attempt 1")[0] == 200
    wait_state(browser, "n1", "remote_terminal_local_pending")
    got = []
    notifier = d.Notifier(lambda **n: got.append(n), d.config())
    wait_for("a notification", lambda: notifier.poll_once() or got)
    titles = [n["title"] for n in got]
    assert any(t.startswith("Attempt completed: n1") for t in titles), titles
    # The feed says more (operator actions, stage transitions); only the four kinds are notified,
    # each once (the feed may still grow: read until the two agree).
    def agree():
        notifier.poll_once()
        feed = post(browser, "campaigns", {"campaign_id": "n1", "part": "messages"})[1]["messages"]
        return feed if [n["message"] for n in got] == [m["text"] for m in feed if m["kind"] in d.NOTIFY_KINDS] else None

    feed = wait_for("every notified line, once", agree)
    kinds = [m["kind"] for m in feed]
    assert "OPERATOR_ACTION" in kinds and "STAGE_TRANSITION" in kinds, kinds
    # A new notifier over the same state root (Agent Zero restarted) says nothing again.
    again = []
    assert d.Notifier(lambda **n: again.append(n), d.config()).poll_once() == 0 and again == []
    # Through Agent Zero's own mechanism: the notification manager gets them.
    from agent import AgentContext

    d.agent_zero_notify(level="warning", title="Needs you: n1", message="which dataset?")
    assert AgentContext.get_notification_manager().notifications[-1]["type"] == "warning"


def test_the_profiles_tool_shows_claims_answers_and_explains(browser, started):
    from conftest import load_tool

    assert act(browser, "t1", "observe", objective="train")[0] == 200
    tool = load_tool()
    say = lambda **args: asyncio.run(tool(None, "argus_supervisor", None, args, "", None).execute(**args)).message
    assert "t1: observing.detached" in say(action="status")
    assert say(action="claim", campaign_id="t1").startswith("claim → 200")
    shown = say(action="show", campaign_id="t1")
    assert "controlling.ready" in shown and "lease: epoch" in shown
    assert "claim" in say(action="explain", campaign_id="t1")
    assert say(action="answer", campaign_id="t1", message="x").startswith("answer → 409")
    assert "campaign_id is required" in say(action="claim")


def test_the_daemon_has_no_tcp_listener_is_restarted_with_backoff_and_stops_with_agent_zero(started):
    d = started["daemon"]
    daemon = d._running["daemon"]
    pid = daemon.proc.pid
    sockets = {os.readlink(f"/proc/{pid}/fd/{fd}")[8:-1] for fd in os.listdir(f"/proc/{pid}/fd")
               if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:[")}
    listening = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] == "0A":
                listening.add(cols[9])
    assert sockets and not sockets & listening, "the daemon listens on TCP"
    assert oct(os.stat(started["state"] / "api.sock").st_mode & 0o777) == "0o600"
    # Killed outright: restarted (backoff 1 s), the same state root, the same token.
    os.kill(pid, signal.SIGKILL)
    wait_for("a restart", lambda: daemon.starts == 2 and daemon.proc.pid != pid)
    wait_for("the restarted daemon to answer", lambda: _answers(d))
    # Agent Zero stops: the shutdown stack stops the daemon (SIGTERM: it persists and removes its socket).
    started["stack"].close()
    assert daemon.proc.poll() is not None
    wait_for("the socket to go", lambda: not (started["state"] / "api.sock").exists(), 15)


def _answers(d) -> bool:
    try:
        return d.call("GET", "/health/live", timeout=5)[0] == 200
    except d.DaemonError:
        return False
