"""`GET|POST /api/plugins/argus_supervisor/smoke`: §20's live smoke in the deployment — plugin
loaded, profile discoverable, Argus runtime present (version), heartbeat, OpenTraining's capability
probe, secret masking, no second listener (`helpers/smoke.py`). 200 when every check passes, 503
otherwise; read-only."""

import asyncio

from helpers.api import Request, Response
from usr.plugins.argus_supervisor.helpers import argus_supervisor_daemon as daemon
from usr.plugins.argus_supervisor.helpers import handler
from usr.plugins.argus_supervisor.helpers import smoke


class Smoke(handler.ReadHandler):
    async def process(self, input: dict, request: Request) -> Response:
        report = await asyncio.to_thread(smoke.run)
        return daemon.respond(200 if report["ok"] else 503, report)
