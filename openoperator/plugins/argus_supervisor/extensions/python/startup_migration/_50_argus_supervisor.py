"""Start argus-supervisor at OpenOperator's startup.

Extension point `startup_migration` (OpenOperator, JsonLord/agent-zero: run once after the
framework starts; see plugins/_goal/extensions/python/startup_migration/_30_reconcile_goals.py).
It carries no shutdown stack: the daemon stops with Agent Zero's process (PR_SET_PDEATHSIG on the
child, and an atexit stop). Where both this and `webui_server_start` run, the second finds the
daemon already started."""

import atexit
import sys
from pathlib import Path

_HELPERS = str(Path(__file__).resolve().parents[3] / "helpers")
if _HELPERS not in sys.path:
    sys.path.insert(0, _HELPERS)

import argus_supervisor_daemon as daemon  # noqa: E402
from helpers.extension import Extension  # noqa: E402


class ArgusSupervisorStartup(Extension):
    def execute(self, **kwargs):
        daemon.ensure_started()
        atexit.register(daemon.stop_all)
