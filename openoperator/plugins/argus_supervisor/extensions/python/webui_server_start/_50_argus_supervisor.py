"""Start argus-supervisor with Agent Zero's web server, stop it with the server.

Extension point `webui_server_start` (Agent Zero: called with the server `runtime` and its
`shutdown` exit stack; see agent0ai/agent-zero
plugins/_a0_connector/extensions/python/webui_server_start/_10_browser_runtime.py, which registers
its own teardown on the same stack). The daemon listens only on its Unix socket under the state
root: no port, no listener beside Agent Zero's own."""

import sys
from pathlib import Path

_HELPERS = str(Path(__file__).resolve().parents[3] / "helpers")
if _HELPERS not in sys.path:
    sys.path.insert(0, _HELPERS)

import argus_supervisor_daemon as daemon  # noqa: E402
from helpers.extension import Extension  # noqa: E402


class ArgusSupervisorStart(Extension):
    def execute(self, runtime=None, shutdown=None, **kwargs):
        daemon.ensure_started(shutdown=shutdown)
