"""`GET|POST /api/plugins/argus_supervisor/health`: the daemon's readiness as it says it (200, or
503 with its reasons), or 503 `daemon_unreachable` when it says nothing. Read-only."""

from helpers.api import Request, Response
from usr.plugins.argus_supervisor.helpers import argus_supervisor_daemon as daemon
from usr.plugins.argus_supervisor.helpers import handler


class Health(handler.ReadHandler):
    async def process(self, input: dict, request: Request) -> Response:
        return await daemon.forward("GET", "/health", timeout=10)
