"""`GET|POST /api/plugins/argus_supervisor/status`: campaign counts by state and the daemon's
counters. Read-only."""

from helpers.api import Request, Response
from usr.plugins.argus_supervisor.helpers import argus_supervisor_daemon as daemon
from usr.plugins.argus_supervisor.helpers import handler


class Status(handler.ReadHandler):
    async def process(self, input: dict, request: Request) -> Response:
        return await daemon.forward("GET", "/status")
