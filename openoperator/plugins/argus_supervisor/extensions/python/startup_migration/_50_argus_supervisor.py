"""Start argus-supervisor when OpenOperator starts.

Extension point `startup_migration`: `run_ui.py` calls it once per process, before the web server
starts (`initialize.initialize_migration` → `helpers.migration.startup_migration`). The daemon and
the notifier stop with Agent Zero's process: atexit on a clean exit (SIGTERM), PR_SET_PDEATHSIG on
the child when Agent Zero is killed. This tree has no caller of `webui_server_start`, so the plugin
hooks nothing else; `ensure_started` would find the daemon running if a second hook called it."""

import atexit

from helpers.extension import Extension
from usr.plugins.argus_supervisor.helpers import argus_supervisor_daemon as daemon


class ArgusSupervisorStartup(Extension):
    def execute(self, **kwargs):
        daemon.ensure_started()
        atexit.register(daemon.stop_all)
