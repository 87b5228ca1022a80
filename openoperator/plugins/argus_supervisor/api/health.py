"""`GET|POST /api/plugins/argus_supervisor/health`: the daemon's readiness as it says it (200, or
503 with its reasons), or 503 `daemon_unreachable` when it says nothing. Agent Zero's auth and
CSRF apply (the ApiHandler defaults)."""

import sys
from pathlib import Path

_HELPERS = str(Path(__file__).resolve().parents[1] / "helpers")
if _HELPERS not in sys.path:
    sys.path.insert(0, _HELPERS)

import argus_supervisor_daemon as daemon  # noqa: E402
from helpers.api import ApiHandler, Request, Response  # noqa: E402


class Health(ApiHandler):
    @classmethod
    def get_methods(cls) -> list[str]:
        return ["GET", "POST"]

    async def process(self, input: dict, request: Request) -> Response:
        return daemon.forward("GET", "/health", timeout=10)
