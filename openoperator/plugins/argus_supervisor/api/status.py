"""`GET|POST /api/plugins/argus_supervisor/status`: campaign counts by state and the daemon's
counters. Read-only."""

from helpers.api import ApiHandler, Request, Response
from usr.plugins.argus_supervisor.helpers import argus_supervisor_daemon as daemon


class Status(ApiHandler):
    # Declared here, not inherited: a build whose base class relaxes auth does not relax ours.
    @classmethod
    def requires_auth(cls) -> bool:
        return True

    @classmethod
    def requires_csrf(cls) -> bool:
        return True

    @classmethod
    def get_methods(cls) -> list[str]:
        return ["GET", "POST"]

    async def process(self, input: dict, request: Request) -> Response:
        return await daemon.forward("GET", "/status")
