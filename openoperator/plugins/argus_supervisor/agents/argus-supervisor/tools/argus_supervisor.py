"""The argus-supervisor profile's tool: every §4.1 duty of the operator's profile — see the
campaigns, start or attach a supervision, take or give back control, pause and resume it, read the
evidence, the significant events and a Needs you, answer it, decide an attempt's end, and explain
who decided what — through the daemon's API, the same one the plugin's handlers and the CLI use.

`VERBS` is the tool's one list: what it dispatches, what its prompt lists (a test holds the prompt
to it) and what an unknown action is told. It belongs to the profile (the plugin's
`agents/argus-supervisor/tools/`), so agent0 and other profiles neither see it nor its prompt.
Every answer is the daemon's real outcome (a refusal says who refused); every daemon call runs off
the event loop and is bounded (`daemon.acall`); every piece of text that came from OpenTraining,
Argus or Foreman goes through `daemon.for_host` (bounded, escaped) and is labelled untrusted.
Nothing here polls or reports on its own."""

import time

from helpers.tool import Response, Tool
from usr.plugins.argus_supervisor.helpers import argus_supervisor_daemon as daemon

# Feed kinds that explain a decision: who decided what and why, and the operator's own actions.
WHY_KINDS = ("DECISION", "OPERATOR_ACTION", "NEEDS_YOU", "ATTEMPT_COMPLETED", "ATTEMPT_FAILED",
             "ATTEMPT_CANCELED", "MISSION_COMPLETE", "CRITICAL_FAILURE")

# The verbs that start or end remote work: each sent only once the operator confirmed it
# (`confirm: true`), with what it does said before.
CONFIRMED = {
    "submit": "send the first attempt to OpenTraining (a new remote task) with `message` as its instruction",
    "accept": "accept the attempt's result and close the campaign as accepted",
    "reject": "reject the attempt's result and close the campaign as rejected",
    "next-attempt": "start the next attempt at OpenTraining (a new remote task) with `message` as its instruction",
    "cancel": "cancel the running attempt's task at OpenTraining",
}

# action -> (what it does, its arguments). The prompt lists exactly these (a test checks).
VERBS = {
    "status": ("every campaign, one line each", ""),
    "show": ("one campaign: state, lease, Argus, the reviewer's verdict, what needs you, what you may do", "campaign_id"),
    "observe": ("start or attach supervision of a campaign", "campaign_id, objective, task_id (optional: attach to a running remote task)"),
    "claim": ("ask OpenTraining for the campaign's lease (it decides)", "campaign_id"),
    "release": ("give the lease back", "campaign_id"),
    "pause": ("stop supervising: no wake, no write until resumed", "campaign_id, reason (optional)"),
    "resume": ("supervise again", "campaign_id"),
    "evidence": ("the remote's answer and artifacts for the newest attempt (untrusted)", "campaign_id"),
    "events": ("the significant events, newest last", "campaign_id"),
    "needs": ("the pending Needs you: its question, who asks, how to answer, the options", "campaign_id"),
    "answer": ("answer the pending Needs you", "campaign_id, message"),
    **{verb: (what, "campaign_id, " + ("message, " if verb in ("submit", "next-attempt") else "") + "reason, confirm")
       for verb, what in CONFIRMED.items()},
    "explain": ("who decided what and why (Argus, Foreman, the operator, the policy), from the feed", "campaign_id"),
}

EVENTS_SHOWN = 15
WHY_SHOWN = 12
EXCERPT_MAX = 600


def _state_line(c: dict) -> str:
    q = " · Needs you" if c.get("pending_question") else ""
    return daemon.for_host(f"{c.get('campaign_id')}: {c.get('state')} · attempts {c.get('attempts', 0)}{q}", 300)


def _answer_line(c: dict) -> str:
    """The remote's final answer to the attempt, where it gave one (bounded, escaped, untrusted)."""
    ev = c.get("latest_evidence") or {}
    a = ev.get("answer") or {}
    if not a:
        return "the remote's answer: none given"
    # An answer read for an earlier attempt than the one bound now says whose it is.
    whose = ""
    if c.get("remote_task_id") and ev.get("task") and ev.get("task") != c.get("remote_task_id"):
        whose = (f" to an earlier attempt (task {daemon.for_host(ev.get('task'), 120)}; the attempt "
                 f"bound now is task {daemon.for_host(c.get('remote_task_id'), 120)})")
    return (f"the remote's answer{whose} (untrusted text, from its {daemon.for_host(a.get('from'), 40)}): "
            f"{daemon.for_host(a.get('untrusted_text'))}")


def _said(status: int, answer: dict | None) -> str:
    """A daemon's answer to an action: its status, who refused (when refused) and its words."""
    a = answer or {}
    said = a.get("message") or (a.get("error") or {}).get("message", "")
    who = f" (refused by {daemon.for_host(a['refused_by'], 40)})" if a.get("refused_by") else ""
    return f"{status}{who}: {daemon.for_host(said, 600)}"


def _event_line(e: dict) -> str:
    """One significant event: its class, when, and its fields (stage names and details are the
    remote's text, so the line is labelled untrusted where it carries any)."""
    ev = e.get("event") if isinstance(e.get("event"), dict) else {}
    at = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(int(e.get("at") or 0)))
    fields = ", ".join(f"{k} {v}" for k, v in ev.items() if k != "type" and isinstance(v, (str, int)))
    detail = f" — {e['detail']}" if e.get("detail") else ""
    return daemon.for_host(f"[{ev.get('type', '?')}] {at}: {fields}{detail}", 500)


class ArgusSupervisor(Tool):
    async def execute(self, action: str = "status", campaign_id: str = "", **kwargs) -> Response:
        args = {**kwargs, **(self.args or {})}
        action = str(args.get("action", action) or "status")
        cid = str(args.get("campaign_id", campaign_id) or "")
        try:
            said = await self._run(action, cid, args)
        except daemon.DaemonError as e:
            said = f"argus-supervisor is not answering: {e}. Nothing was sent."
        if len(said) > daemon.TOOL_ANSWER_MAX:
            said = said[: daemon.TOOL_ANSWER_MAX - 1] + "…"
        return Response(message=said, break_loop=False)

    async def _run(self, action: str, cid: str, args: dict) -> str:
        if action not in VERBS:
            return f"Unknown action {daemon.for_host(action, 40)}: use {', '.join(VERBS)}."
        if action == "status":
            _, body = await daemon.acall("GET", "/campaigns")
            rows = [_state_line(c) for c in (body or {}).get("campaigns", [])]
            return "\n".join(rows) or "No campaigns."
        if not cid:
            return f"{action}: campaign_id is required (refused by the tool; nothing was sent)."
        seg = daemon.segment(cid)
        if action in ("show", "evidence", "needs"):
            status, c = await daemon.acall("GET", f"/campaigns/{seg}")
            if status != 200:
                return f"{action} → {_said(status, c)}"
            return getattr(self, "_" + action)(c)
        if action == "events":
            status, body = await daemon.acall("GET", f"/campaigns/{seg}/events")
            if status != 200:
                return f"events → {_said(status, body)}"
            rows = [_event_line(e) for e in (body or {}).get("events", [])[-EVENTS_SHOWN:]]
            return "\n".join(["Significant events, newest last (stages and details are untrusted text):", *rows]) if rows else "No significant event yet."
        if action == "explain":
            status, feed = await daemon.acall("GET", f"/campaigns/{seg}/messages")
            if status != 200:
                return f"explain → {_said(status, feed)}"
            why = [m for m in (feed or {}).get("messages", []) if m.get("kind") in WHY_KINDS]
            rows = [f"[{daemon.for_host(m.get('kind'), 40)}] {daemon.for_host(m.get('text'), 600)}" for m in why[-WHY_SHOWN:]]
            return ("Feed lines (text from OpenTraining, Argus or Foreman in them is untrusted):\n"
                    + "\n".join(rows)) if rows else "No decision recorded yet."
        return await self._act(action, cid, seg, args)

    async def _act(self, action: str, cid: str, seg: str, args: dict) -> str:
        body = {k: str(args[k]) for k in ("objective", "task_id", "message", "reason") if args.get(k)}
        if action == "observe" and "objective" not in body:
            return "observe: objective is required (refused by the tool; nothing was sent)."
        if action in ("answer", "submit", "next-attempt") and "message" not in body:
            return f"{action}: message is required (refused by the tool; nothing was sent)."
        if action in CONFIRMED and str(args.get("confirm", "")).lower() not in ("true", "1", "yes"):
            return (f"{action} {daemon.for_host(cid, 80)} would {CONFIRMED[action]}. Nothing was sent: "
                    f"ask the operator, then call again with confirm: true (and their reason).")
        status, answer = await daemon.acall("POST", f"/campaigns/{seg}/{action}", body)
        return f"{action} → {_said(status, answer)}"

    def _show(self, c: dict) -> str:
        q = c.get("pending_question") or {}
        remote = f"{c.get('remote_state')} {c.get('remote_stage') or ''}".rstrip()
        return "\n".join([
            _state_line(c),
            f"remote (untrusted text): {daemon.for_host(remote, 300)}",
            f"lease: {'epoch ' + str(c['controller_epoch']) if c.get('controller_epoch') else 'none'}",
            f"Argus: {daemon.for_host(c.get('argus_status') or 'not attached', 80)}; "
            f"reviewer verdict: {daemon.for_host(c.get('reviewer_verdict') or 'none', 80)}",
            f"question (untrusted text): {daemon.for_host(q.get('text'))}" if q else "no question pending",
            _answer_line(c),
            f"allowed: {daemon.for_host(', '.join(c.get('allowed_actions') or []), 400)}",
        ])

    def _evidence(self, c: dict) -> str:
        ev = c.get("latest_evidence") or {}
        if not ev:
            return f"{daemon.for_host(c.get('campaign_id'), 80)}: no evidence read yet."
        lines = [f"Evidence of task {daemon.for_host(ev.get('task'), 120)} (all of it untrusted text from OpenTraining):",
                 _answer_line(c)]
        for a in ev.get("artifacts") or []:
            lines.append(f"artifact {daemon.for_host(a.get('name') or 'unnamed', 120)} ({a.get('bytes', 0)} bytes): "
                         f"{daemon.for_host(a.get('untrusted_excerpt') or '', EXCERPT_MAX)}")
        return "\n".join(lines)

    def _needs(self, c: dict) -> str:
        q = c.get("pending_question") or {}
        if not q:
            return f"{daemon.for_host(c.get('campaign_id'), 80)}: nothing needs you."
        return "\n".join([
            f"Needs you ({daemon.for_host(q.get('source'), 40)} asks; untrusted text): {daemon.for_host(q.get('text'))}",
            f"how to answer: {daemon.for_host(q.get('how'), 300)}",
            f"options now: {daemon.for_host(', '.join(c.get('allowed_actions') or []), 400)}",
        ])
