"""The operator's duties (§4.1) from OpenOperator, as the operator meets them: the profile's tool
called through Agent Zero's own tool path (`Agent.process_tools`, the JSON a model writes in the
chat), under the real OpenOperator, with the real daemon and the simulated remote. Judged by what
reached the remote (its audit), not only by what the tool said."""

from __future__ import annotations

import pytest
from conftest import run_in_host, wait_for

# Attempt 1 fails with evidence (slowly enough to cancel it first); attempt 2 stops with a question
# until the operator answers, then completes.
DUTIES = '''name = "duties"
description = "A failure with evidence, then a question, then a pass."

[[attempts]]
steps = [
  { at_ms = 0, state = "submitted", stage = "queued" },
  { at_ms = 300, state = "working", stage = "preprocessing" },
  { at_ms = 8000, state = "failed", stage = "preprocessing", message = "Preprocessing failed.", artifacts = [
    { name = "failure-evidence", text = "dataset is text-only; no messages column" },
  ] },
]

[[attempts]]
steps = [
  { at_ms = 0, state = "submitted", stage = "queued" },
  { at_ms = 800, state = "input-required", stage = "preprocessing", message = "Which dataset: A or B?" },
  { at_ms = 3600000, state = "working", stage = "training" },
  { at_ms = 3601500, state = "completed", stage = "evaluation", artifacts = [
    { name = "evaluation-report", text = "accuracy=0.88 (threshold 0.85): PASS" },
  ] },
]
'''


@pytest.fixture()
def duties(tmp_path) -> str:
    path = tmp_path / "duties.toml"
    path.write_text(DUTIES)
    return str(path)


def view(a0, cid: str) -> dict:
    return a0.daemon_call("GET", f"/campaigns/{cid}")[1]


def test_every_duty_of_the_profile_through_agent_zeros_tool_path(agent_zero, duties, tmp_path):
    a0 = agent_zero(scenario=duties)

    def chat(*calls: dict) -> list[str]:
        return run_in_host(a0, "chat", list(calls))

    # Start supervising; the tool refuses what it cannot send, and says it was the tool.
    said = chat({"action": "status"},
                {"action": "observe", "campaign_id": "c1"},
                {"action": "observe", "campaign_id": "c1", "objective": "make the evaluation pass"},
                {"action": "claim", "campaign_id": "c1"},
                {"action": "pause", "campaign_id": "c1", "reason": "lunch"})
    assert said[0] == "No campaigns.", said
    assert said[1].startswith("observe: objective is required (refused by the tool; nothing was sent)"), said
    assert said[2].startswith("observe → 200: observe: done; state observing.detached"), said
    assert said[3].startswith("claim → 200"), said
    assert said[4].startswith("pause → 200"), said
    assert "paused" in view(a0, "c1")["state"], view(a0, "c1")["state"]
    # A refusal is said as one, naming who refused: a paused campaign takes no submit.
    said = chat({"action": "submit", "campaign_id": "c1", "message": "attempt 1", "confirm": True},
                {"action": "resume", "campaign_id": "c1"},
                {"action": "claim", "campaign_id": "c1"},
                {"action": "submit", "campaign_id": "c1", "message": "attempt 1"})
    assert said[0].startswith("submit → 409 (refused by supervisor)"), said
    # Resumed, it observes again; control is claimed anew.
    assert said[1].startswith("resume → 200") and said[2].startswith("claim → 200"), said
    # Unconfirmed, a decision says what it would do and sends nothing.
    assert "would send the first attempt" in said[3] and "Nothing was sent" in said[3], said
    assert a0.sent("message/send") == []
    said = chat({"action": "submit", "campaign_id": "c1", "message": "attempt 1", "confirm": True})
    assert said[0].startswith("submit → 200"), said
    assert [e["text"] for e in a0.sent("message/send") if e["accepted"]] == ["attempt 1"]

    # Attempt 1 fails: the evidence and the events, labelled untrusted.
    wait_for("attempt 1 to fail", lambda: view(a0, "c1")["state"] == "remote_terminal_local_pending", 60, 0.5)
    evidence, events, unconfirmed = chat({"action": "evidence", "campaign_id": "c1"},
                                         {"action": "events", "campaign_id": "c1"},
                                         {"action": "next-attempt", "campaign_id": "c1", "message": "attempt 2"})
    assert "untrusted" in evidence and "failure-evidence" in evidence and "no messages column" in evidence, evidence
    assert events.startswith("Significant events, newest last") and "[ATTEMPT_COMPLETED]" in events, events
    assert "outcome failed" in events and "untrusted" in events, events
    assert "Nothing was sent" in unconfirmed
    assert len(a0.sent("message/send")) == 1
    said = chat({"action": "next-attempt", "campaign_id": "c1", "message": "attempt 2", "reason": "repaired", "confirm": True})
    assert said[0].startswith("next-attempt → 200"), said
    assert [e["text"] for e in a0.sent("message/send") if e["accepted"]] == ["attempt 1", "attempt 2"]

    # Needs you: the question, who asks, how to answer and the options; the operator's answer goes
    # to the remote as an intervention.
    wait_for("the question", lambda: view(a0, "c1").get("pending_question"), 60, 0.5)
    needs, answered = chat({"action": "needs", "campaign_id": "c1"},
                           {"action": "answer", "campaign_id": "c1", "message": "use A"})
    assert "Which dataset: A or B?" in needs and "untrusted" in needs, needs
    assert "how to answer:" in needs and "options now:" in needs and "answer" in needs, needs
    assert answered.startswith("answer → 200"), answered
    assert any(e["text"] == "use A" and e["accepted"] for e in a0.sent("campaign/intervene")), a0.sent("campaign/intervene")

    # The attempt passes; the operator accepts, confirmed.
    wait_for("attempt 2 to complete", lambda: view(a0, "c1")["state"] == "remote_terminal_local_pending", 60, 0.5)
    said = chat({"action": "accept", "campaign_id": "c1", "reason": "evaluation passes", "confirm": True},
                {"action": "explain", "campaign_id": "c1"},
                {"action": "claim", "campaign_id": "c1"})
    assert said[0].startswith("accept → 200"), said
    assert view(a0, "c1")["state"] == "closed.accepted"
    explain = said[1]
    assert "[OPERATOR_ACTION]" in explain and "accept" in explain and "[MISSION_COMPLETE]" in explain, explain
    assert "untrusted" in explain
    assert said[2].startswith("claim → 409 (refused by supervisor)"), said

    # Cancel a running attempt (confirmed), then reject it.
    said = chat({"action": "observe", "campaign_id": "c2", "objective": "second"},
                {"action": "claim", "campaign_id": "c2"},
                {"action": "release", "campaign_id": "c2"},
                {"action": "show", "campaign_id": "c2"},
                {"action": "claim", "campaign_id": "c2"},
                {"action": "submit", "campaign_id": "c2", "message": "go", "confirm": True},
                {"action": "cancel", "campaign_id": "c2", "reason": "wrong data", "confirm": True})
    assert said[2].startswith("release → 200"), said
    assert said[3].startswith("c2: observing") and "lease: none" in said[3] and "allowed:" in said[3], said
    assert said[5].startswith("submit → 200") and said[6].startswith(("cancel → 200", "cancel → 202")), said
    assert [e for e in a0.sent("tasks/cancel") if e["accepted"]], a0.audit()["counters"]
    wait_for("the cancel to be read", lambda: view(a0, "c2")["state"] == "remote_terminal_local_pending", 60, 0.5)
    said = chat({"action": "reject", "campaign_id": "c2", "reason": "canceled", "confirm": True})
    assert said[0].startswith("reject → 200"), said
    assert view(a0, "c2")["state"] == "closed.rejected"
    # Every remote task the chat started, once: two for c1, one for c2.
    assert a0.audit()["counters"]["tasks_per_campaign"] == {"c1": 2, "c2": 1}

    # The daemon down: said once, clearly, and nothing sent.
    empty = tmp_path / "no-daemon"
    empty.mkdir()
    said = run_in_host(a0, "chat", [{"action": "status"}], env={"ARGUS_SUPERVISOR_HOME": str(empty)})
    assert said[0].startswith("argus-supervisor is not answering:") and said[0].count("not answering") == 1, said
    assert "Nothing was sent" in said[0]


def test_every_duty_from_the_plugins_page_in_the_real_modal(agent_zero, duties, chrome, tmp_path):
    import os
    import signal

    from selenium.webdriver.common.by import By
    from test_page import click, log_in, text

    a0 = agent_zero(scenario=duties)
    log_in(chrome, a0)
    chrome.execute_script("openModal('/plugins/argus_supervisor/webui/main.html')")
    wait_for("readiness", lambda: text(chrome, "#argus-sv-health") == "Ready", 30, 0.3)

    def fill(css: str, value: str) -> None:
        field = chrome.find_element(By.CSS_SELECTOR, css)
        field.clear()
        field.send_keys(value)

    def outcome(prefix: str) -> str:
        try:
            return wait_for(f"the outcome {prefix}", lambda: (lambda t: t if t.startswith(prefix) else None)(
                text(chrome, "#argus-sv-outcome")), 40, 0.3)
        except AssertionError:
            chrome.save_screenshot(str(tmp_path / "no-outcome.png"))
            raise AssertionError(f"{prefix!r} never shown; the page says: {text(chrome, '#argus-sv')}") from None

    # A refusal from the page: an id the daemon cannot take, refused by the supervisor, said so.
    fill("#argus-sv-observe-id", "bad/id")
    fill("#argus-sv-observe-objective", "train")
    click(chrome, "#argus-sv-observe-send")
    said = outcome("observe → 4")
    assert "(refused by supervisor)" in said, said
    assert "refused" in chrome.find_element(By.ID, "argus-sv-outcome").get_attribute("class")
    # Start supervising from the form.
    fill("#argus-sv-observe-id", "p1")
    click(chrome, "#argus-sv-observe-send")
    outcome("observe → 200")
    wait_for("p1 in the list", lambda: "p1" in text(chrome, "#argus-sv tr[data-campaign='p1']"), 30, 0.3)
    click(chrome, "#argus-sv-action-claim")
    outcome("claim → 200")
    # submit asks first; "keep" sends nothing; confirmed, it sends the text once.
    fill("#argus-sv-text", "attempt 1")
    click(chrome, "#argus-sv-action-submit")
    wait_for("the confirmation", lambda: "Really submit p1?" in text(chrome, "#argus-sv-confirm"))
    click(chrome, "#argus-sv-confirm-abort")
    assert a0.sent("message/send") == []
    click(chrome, "#argus-sv-action-submit")
    click(chrome, "#argus-sv-confirm-send")
    outcome("submit → 200")
    assert [e["text"] for e in a0.sent("message/send") if e["accepted"]] == ["attempt 1"]
    # The failure's evidence and events, each in an untrusted box or list.
    wait_for("the evidence", lambda: "failure-evidence" in text(chrome, "#argus-sv-artifacts"), 60, 0.5)
    assert "no messages column" in text(chrome, "#argus-sv-artifacts")
    wait_for("the events", lambda: "[ATTEMPT_COMPLETED]" in text(chrome, "#argus-sv-events"), 30, 0.3)
    # next-attempt, confirmed.
    fill("#argus-sv-text", "attempt 2")
    click(chrome, "#argus-sv-action-next-attempt")
    wait_for("the confirmation", lambda: "a new remote task" in text(chrome, "#argus-sv-confirm"))
    click(chrome, "#argus-sv-confirm-send")
    outcome("next-attempt → 200")
    # Needs you: its question, who asks, how to answer, the options; answered from the page.
    wait_for("Needs you", lambda: "Which dataset: A or B?" in text(chrome, "#argus-sv-needs"), 60, 0.5)
    assert "How to answer:" in text(chrome, "#argus-sv-needs") and "Options now:" in text(chrome, "#argus-sv-needs")
    fill("#argus-sv-text", "use B")
    click(chrome, "#argus-sv-action-answer")
    outcome("answer → 200")
    assert any(e["text"] == "use B" and e["accepted"] for e in a0.sent("campaign/intervene"))
    # accept, confirmed: the campaign closes, and "Why" lists the operator's decision.
    wait_for("attempt 2 to complete", lambda: view(a0, "p1")["state"] == "remote_terminal_local_pending", 60, 0.5)
    click(chrome, "#argus-sv-action-accept")
    wait_for("the confirmation", lambda: "Really accept p1?" in text(chrome, "#argus-sv-confirm"))
    click(chrome, "#argus-sv-confirm-send")
    outcome("accept → 200")
    assert view(a0, "p1")["state"] == "closed.accepted"
    wait_for("the decision in Why", lambda: "[MISSION_COMPLETE]" in text(chrome, "#argus-sv-why"), 30, 0.3)
    assert "[OPERATOR_ACTION]" in text(chrome, "#argus-sv-why")
    assert a0.audit()["counters"]["tasks_per_campaign"] == {"p1": 2}
    chrome.save_screenshot(str(tmp_path / "plugin-page-duties.png"))

    # The other verbs, on a second campaign: release, pause, resume, cancel and reject (confirmed).
    fill("#argus-sv-observe-id", "p2")
    fill("#argus-sv-observe-objective", "second")
    click(chrome, "#argus-sv-observe-send")
    outcome("observe → 200")
    for verb in ("claim", "release", "claim", "pause", "resume", "claim"):
        click(chrome, f"#argus-sv-action-{verb}")
        outcome(f"{verb} → 200")
        # The next press waits for the refresh that follows the outcome (its allowed actions).
        chrome.execute_script("Alpine.store('argusSupervisor').outcome = ''")
    fill("#argus-sv-text", "go")
    click(chrome, "#argus-sv-action-submit")
    click(chrome, "#argus-sv-confirm-send")
    outcome("submit → 200")
    click(chrome, "#argus-sv-action-cancel")
    # What it does and that it cannot be undone come from the daemon's verb table (the view's `verbs`).
    wait_for("the confirmation", lambda: "Really cancel p2? This will cancel the running attempt's task at "
             "OpenTraining. This cannot be undone." in text(chrome, "#argus-sv-confirm"))
    assert "danger" in (chrome.find_element(By.CSS_SELECTOR, "#argus-sv-action-cancel").get_attribute("class") or "")
    click(chrome, "#argus-sv-confirm-send")
    outcome("cancel → 20")
    assert [e for e in a0.sent("tasks/cancel") if e["accepted"] and e.get("campaign_id") in (None, "p2")]
    wait_for("the cancel to be read", lambda: view(a0, "p2")["state"] == "remote_terminal_local_pending", 60, 0.5)
    click(chrome, "#argus-sv-action-reject")
    wait_for("the confirmation", lambda: "Really reject p2?" in text(chrome, "#argus-sv-confirm"))
    click(chrome, "#argus-sv-confirm-send")
    outcome("reject → 200")
    assert view(a0, "p2")["state"] == "closed.rejected"
    assert a0.audit()["counters"]["tasks_per_campaign"] == {"p1": 2, "p2": 1}

    # The daemon hangs (stopped): the page says so once, plainly, and recovers with it.
    (pid,) = a0.daemon_pids()
    os.kill(pid, signal.SIGSTOP)
    try:
        wait_for("the page to say the daemon is down",
                 lambda: "not answering" in text(chrome, "#argus-sv-health"), 60, 0.5)
        assert text(chrome, "#argus-sv").count("not answering") == 1, text(chrome, "#argus-sv")
    finally:
        os.kill(pid, signal.SIGCONT)
    wait_for("readiness again", lambda: text(chrome, "#argus-sv-health") == "Ready", 60, 0.5)
