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
    assert said[2].startswith("observe → 200"), said
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
                {"action": "submit", "campaign_id": "c2", "message": "go", "confirm": True},
                {"action": "cancel", "campaign_id": "c2", "reason": "wrong data", "confirm": True})
    assert said[2].startswith("submit → 200") and said[3].startswith(("cancel → 200", "cancel → 202")), said
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
