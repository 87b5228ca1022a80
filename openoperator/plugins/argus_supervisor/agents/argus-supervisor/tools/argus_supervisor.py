"""The argus-supervisor profile's tool: show state, claim or release control, answer a Needs you,
explain a decision — through the daemon's API, the same one the plugin's handlers forward to.

It belongs to the profile (the plugin's `agents/argus-supervisor/tools/`), so agent0 and other
profiles neither see it nor its prompt. Every answer is the daemon's real outcome (a refusal says
who refused); every daemon call runs off the event loop and is bounded (`daemon.acall`); every
piece of text that came from OpenTraining, Argus or Foreman goes through `daemon.for_host`
(bounded, escaped) and is labelled untrusted. Nothing here polls or reports on its own."""

from helpers.tool import Response, Tool
from usr.plugins.argus_supervisor.helpers import argus_supervisor_daemon as daemon

# Feed kinds that explain a decision: who decided what and why, and the operator's own actions.
WHY_KINDS = ("DECISION", "OPERATOR_ACTION", "NEEDS_YOU", "ATTEMPT_COMPLETED", "ATTEMPT_FAILED",
             "ATTEMPT_CANCELED", "MISSION_COMPLETE")


def _state_line(c: dict) -> str:
    q = " · Needs you" if c.get("pending_question") else ""
    return daemon.for_host(f"{c.get('campaign_id')}: {c.get('state')} · attempts {c.get('attempts', 0)}{q}", 300)


def _answer_line(c: dict) -> str:
    """The remote's final answer to the attempt, where it gave one (bounded, escaped, untrusted)."""
    a = ((c.get("latest_evidence") or {}).get("answer")) or {}
    if not a:
        return "the remote's answer: none given"
    return (f"the remote's answer (untrusted text, from its {daemon.for_host(a.get('from'), 40)}): "
            f"{daemon.for_host(a.get('untrusted_text'))}")


def _said(status: int, answer: dict | None) -> str:
    a = answer or {}
    said = a.get("message") or (a.get("error") or {}).get("message", "")
    who = f" (refused by {a['refused_by']})" if a.get("refused_by") else ""
    return f"{status}{who}: {daemon.for_host(said, 600)}"


class ArgusSupervisor(Tool):
    async def execute(self, action: str = "status", campaign_id: str = "", message: str = "", **kwargs) -> Response:
        action = str(self.args.get("action", action) or "status")
        cid = str(self.args.get("campaign_id", campaign_id) or "")
        text = str(self.args.get("message", message) or "")
        try:
            said = await self._run(action, cid, text)
        except daemon.DaemonError as e:
            said = f"argus-supervisor is not answering: {e}"
        if len(said) > daemon.TOOL_ANSWER_MAX:
            said = said[: daemon.TOOL_ANSWER_MAX - 1] + "…"
        return Response(message=said, break_loop=False)

    async def _run(self, action: str, cid: str, text: str) -> str:
        if action == "status":
            _, body = await daemon.acall("GET", "/campaigns")
            rows = [_state_line(c) for c in (body or {}).get("campaigns", [])]
            return "\n".join(rows) or "No campaigns."
        if not cid:
            return f"{daemon.for_host(action, 40)}: campaign_id is required."
        seg = daemon.segment(cid)
        if action == "show":
            status, c = await daemon.acall("GET", f"/campaigns/{seg}")
            if status != 200:
                return f"show → {_said(status, c)}"
            q = c.get("pending_question") or {}
            remote = f"{c.get('remote_state')} {c.get('remote_stage') or ''}".rstrip()
            lines = [
                _state_line(c),
                f"remote (untrusted text): {daemon.for_host(remote, 300)}",
                f"lease: {'epoch ' + str(c['controller_epoch']) if c.get('controller_epoch') else 'none'}",
                f"Argus: {daemon.for_host(c.get('argus_status') or 'not attached', 80)}; "
                f"reviewer verdict: {daemon.for_host(c.get('reviewer_verdict') or 'none', 80)}",
                f"question (untrusted text): {daemon.for_host(q.get('text'))}" if q else "no question pending",
                _answer_line(c),
                f"allowed: {daemon.for_host(', '.join(c.get('allowed_actions') or []), 400)}",
            ]
            return "\n".join(lines)
        if action in ("claim", "release", "answer"):
            body = {"message": text} if action == "answer" else {}
            status, answer = await daemon.acall("POST", f"/campaigns/{seg}/{action}", body)
            return f"{action} → {_said(status, answer)}"
        if action == "explain":
            _, feed = await daemon.acall("GET", f"/campaigns/{seg}/messages")
            why = [m for m in (feed or {}).get("messages", []) if m.get("kind") in WHY_KINDS]
            rows = [f"[{daemon.for_host(m.get('kind'), 40)}] {daemon.for_host(m.get('text'), 600)}" for m in why[-10:]]
            return ("Feed lines (text from OpenTraining, Argus or Foreman in them is untrusted):\n"
                    + "\n".join(rows)) if rows else "No decision recorded yet."
        return f"Unknown action {daemon.for_host(action, 40)}: use status, show, claim, release, answer or explain."
