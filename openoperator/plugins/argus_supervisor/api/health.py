"""`GET|POST /api/plugins/argus_supervisor/health`: the daemon's readiness as it says it (200, or
503 with its reasons), or 503 `daemon_unreachable` when it says nothing; with `plugin`: the plugin
that answers (its version and digest, read from its own files, and how it was installed), so an
upgrade that a mounted /a0/usr hid shows. Read-only."""

from helpers.api import Request, Response
from usr.plugins.argus_supervisor.helpers import argus_supervisor_daemon as daemon
from usr.plugins.argus_supervisor.helpers import handler


class Health(handler.ReadHandler):
    async def process(self, input: dict, request: Request) -> Response:
        try:
            status, body = await daemon.acall("GET", "/health", timeout=10)
        except daemon.DaemonError as e:
            status, body = 503, {"error": {"code": "daemon_unreachable", "message": str(e)}, "refused_by": "plugin"}
        if isinstance(body, dict):
            body["plugin"] = daemon.plugin_identity()
        return daemon.respond(status, body)
