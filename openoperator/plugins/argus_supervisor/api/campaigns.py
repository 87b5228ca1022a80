"""`GET|POST /api/plugins/argus_supervisor/campaigns`: every campaign, or with `campaign_id` (in
the JSON body or the query) one campaign's view; with `part` also its `events` or `messages`.
§16's `GET campaigns` and `GET campaigns/{id}` in Agent Zero's one-segment form."""

import sys
from pathlib import Path

_HELPERS = str(Path(__file__).resolve().parents[1] / "helpers")
if _HELPERS not in sys.path:
    sys.path.insert(0, _HELPERS)

import argus_supervisor_daemon as daemon  # noqa: E402
from helpers.api import ApiHandler, Request, Response  # noqa: E402

PARTS = {"view": "", "events": "/events", "messages": "/messages"}


class Campaigns(ApiHandler):
    @classmethod
    def get_methods(cls) -> list[str]:
        return ["GET", "POST"]

    async def process(self, input: dict, request: Request) -> Response:
        args = getattr(request, "args", None) or {}
        cid = str(input.get("campaign_id") or args.get("campaign_id") or "")
        part = str(input.get("part") or args.get("part") or "view")
        if part not in PARTS:
            return daemon.respond(400, {"error": {"code": "invalid_body", "message": f"part must be one of {sorted(PARTS)}", "field": "part"}, "refused_by": "plugin"})
        if not cid:
            return daemon.forward("GET", "/campaigns")
        return daemon.forward("GET", f"/campaigns/{daemon.segment(cid)}{PARTS[part]}")
