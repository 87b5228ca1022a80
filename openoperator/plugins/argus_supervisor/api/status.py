"""`GET|POST /api/plugins/argus_supervisor/status`: campaign counts by state and the daemon's
counters. Agent Zero's auth and CSRF apply."""

import sys
from pathlib import Path

_HELPERS = str(Path(__file__).resolve().parents[1] / "helpers")
if _HELPERS not in sys.path:
    sys.path.insert(0, _HELPERS)

import argus_supervisor_daemon as daemon  # noqa: E402
from helpers.api import ApiHandler, Request, Response  # noqa: E402


class Status(ApiHandler):
    @classmethod
    def get_methods(cls) -> list[str]:
        return ["GET", "POST"]

    async def process(self, input: dict, request: Request) -> Response:
        return daemon.forward("GET", "/status")
