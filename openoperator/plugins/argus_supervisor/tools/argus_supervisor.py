"""The argus-supervisor profile's tool: show state, claim or release control, answer a Needs you,
explain a decision — through the daemon's API, the same one the plugin's handlers forward to.

Every answer is the daemon's real outcome (a refusal says who refused). Nothing here polls or
reports on its own: the tool speaks only when the agent calls it, so no heartbeat chatter."""

import sys
from pathlib import Path

_HELPERS = str(Path(__file__).resolve().parents[1] / "helpers")
if _HELPERS not in sys.path:
    sys.path.insert(0, _HELPERS)

import argus_supervisor_daemon as daemon  # noqa: E402
from helpers.tool import Response, Tool  # noqa: E402

# Feed kinds that explain a decision: who decided what and why, and the operator's own actions.
WHY_KINDS = ("DECISION", "OPERATOR_ACTION", "NEEDS_YOU", "ATTEMPT_COMPLETED", "MISSION_COMPLETE")


def _state_line(c: dict) -> str:
    q = " · Needs you" if c.get("pending_question") else ""
    return f"{c.get('campaign_id')}: {c.get('state')} · attempts {c.get('attempts', 0)}{q}"


class ArgusSupervisor(Tool):
    async def execute(self, action: str = "status", campaign_id: str = "", message: str = "", **kwargs) -> Response:
        action = str(self.args.get("action", action) or "status")
        cid = str(self.args.get("campaign_id", campaign_id) or "")
        text = str(self.args.get("message", message) or "")
        try:
            return Response(message=self._run(action, cid, text), break_loop=False)
        except daemon.DaemonError as e:
            return Response(message=f"argus-supervisor is not answering: {e}", break_loop=False)

    def _run(self, action: str, cid: str, text: str) -> str:
        if action == "status":
            _, body = daemon.call("GET", "/campaigns")
            rows = [_state_line(c) for c in (body or {}).get("campaigns", [])]
            return "\n".join(rows) or "No campaigns."
        if not cid:
            return f"{action}: campaign_id is required."
        seg = daemon.segment(cid)
        if action == "show":
            status, c = daemon.call("GET", f"/campaigns/{seg}")
            if status != 200:
                return f"show: {(c or {}).get('error', {}).get('message', status)}"
            q = c.get("pending_question") or {}
            lines = [
                _state_line(c),
                f"remote: {c.get('remote_state')} {c.get('remote_stage') or ''}".rstrip(),
                f"lease: {'epoch ' + str(c['controller_epoch']) if c.get('controller_epoch') else 'none'}",
                f"Argus: {c.get('argus_status') or 'not attached'}; reviewer verdict: {c.get('reviewer_verdict') or 'none'}",
                f"question (untrusted text): {q.get('text')}" if q else "no question pending",
                f"allowed: {', '.join(c.get('allowed_actions') or [])}",
            ]
            return "\n".join(lines)
        if action in ("claim", "release", "answer"):
            body = {"message": text} if action == "answer" else {}
            status, answer = daemon.call("POST", f"/campaigns/{seg}/{action}", body)
            said = (answer or {}).get("message") or (answer or {}).get("error", {}).get("message", "")
            return f"{action} → {status}: {said}"
        if action == "explain":
            _, feed = daemon.call("GET", f"/campaigns/{seg}/messages")
            why = [m for m in (feed or {}).get("messages", []) if m.get("kind") in WHY_KINDS]
            return "\n".join(f"[{m['kind']}] {m['text']}" for m in why[-10:]) or "No decision recorded yet."
        return f"Unknown action {action!r}: use status, show, claim, release, answer or explain."
