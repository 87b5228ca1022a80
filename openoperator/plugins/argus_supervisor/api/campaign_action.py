"""`POST /api/plugins/argus_supervisor/campaign_action`: one operator verb on one campaign —
§16's `POST campaigns/{id}/{action}` in Agent Zero's one-segment form, the campaign id and the
action in the JSON body (`{"campaign_id", "action", "message"?, "reason"?, "objective"?, ...}`).
The daemon's answer comes back as it is: its real outcome, and who refused (`refused_by`).

Mutating, so it fails closed on an open host: besides Agent Zero's own auth and CSRF (declared in
the handler base), the plugin refuses (403, `refused_by: plugin`) unless a login is configured and this request
holds it (`daemon.operator_refusal`)."""

from helpers.api import Request, Response
from usr.plugins.argus_supervisor.helpers import argus_supervisor_daemon as daemon
from usr.plugins.argus_supervisor.helpers import handler


class CampaignAction(handler.Handler):
    async def process(self, input: dict, request: Request) -> Response:
        refused = daemon.operator_refusal(request)
        if refused is not None:
            return refused
        cid = str(input.get("campaign_id") or "")
        action = str(input.get("action") or "")
        if not cid:
            return daemon.refusal(400, "invalid_body", "campaign_id is required", "campaign_id")
        if action not in daemon.ACTIONS:
            return daemon.refusal(400, "invalid_body", f"action must be one of {', '.join(daemon.ACTIONS)}", "action")
        body = {k: input[k] for k in daemon.ACTION_FIELDS if k in input}
        return await daemon.forward("POST", f"/campaigns/{daemon.segment(cid)}/{action}", body)
