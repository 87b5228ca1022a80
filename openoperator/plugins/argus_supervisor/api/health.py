"""`GET|POST /api/plugins/argus_supervisor/health`: the daemon's readiness as it says it (200, or
503 with its reasons), or 503 `daemon_unreachable` when it says nothing. Read-only."""

from helpers.api import ApiHandler, Request, Response
from usr.plugins.argus_supervisor.helpers import argus_supervisor_daemon as daemon


class Health(ApiHandler):
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
        return await daemon.forward("GET", "/health", timeout=10)
