"""`POST /api/plugins/argus_supervisor/campaign_action`: one operator verb on one campaign —
§16's `POST campaigns/{id}/{action}` in Agent Zero's one-segment form, the campaign id and the
action in the JSON body (`{"campaign_id", "action", "message"?, "reason"?, "objective"?, ...}`).
The daemon's answer comes back as it is: its real outcome, and who refused (`refused_by`)."""

import sys
from pathlib import Path

_HELPERS = str(Path(__file__).resolve().parents[1] / "helpers")
if _HELPERS not in sys.path:
    sys.path.insert(0, _HELPERS)

import argus_supervisor_daemon as daemon  # noqa: E402
from helpers.api import ApiHandler, Request, Response  # noqa: E402


class CampaignAction(ApiHandler):
    async def process(self, input: dict, request: Request) -> Response:
        cid = str(input.get("campaign_id") or "")
        action = str(input.get("action") or "")
        if not cid:
            return daemon.respond(400, {"error": {"code": "invalid_body", "message": "campaign_id is required", "field": "campaign_id"}, "refused_by": "plugin"})
        if action not in daemon.ACTIONS:
            return daemon.respond(400, {"error": {"code": "invalid_body", "message": f"action must be one of {', '.join(daemon.ACTIONS)}", "field": "action"}, "refused_by": "plugin"})
        body = {k: input[k] for k in daemon.ACTION_FIELDS if k in input}
        return daemon.forward("POST", f"/campaigns/{daemon.segment(cid)}/{action}", body)
