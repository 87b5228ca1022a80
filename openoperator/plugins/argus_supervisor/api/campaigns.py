"""`GET|POST /api/plugins/argus_supervisor/campaigns`: every campaign, or with `campaign_id` (in
the JSON body or the query) one campaign's view; with `part` also its `events` or `messages`.
§16's `GET campaigns` and `GET campaigns/{id}` in Agent Zero's one-segment form. Read-only."""

from helpers.api import Request, Response
from usr.plugins.argus_supervisor.helpers import argus_supervisor_daemon as daemon
from usr.plugins.argus_supervisor.helpers import handler

PARTS = {"view": "", "events": "/events", "messages": "/messages"}


class Campaigns(handler.ReadHandler):
    async def process(self, input: dict, request: Request) -> Response:
        args = getattr(request, "args", None) or {}
        cid = str(input.get("campaign_id") or args.get("campaign_id") or "")
        part = str(input.get("part") or args.get("part") or "view")
        if part not in PARTS:
            return daemon.refusal(400, "invalid_body", f"part must be one of {sorted(PARTS)}", "part")
        if not cid:
            return await daemon.forward("GET", "/campaigns")
        return await daemon.forward("GET", f"/campaigns/{daemon.segment(cid)}{PARTS[part]}")
