"""Before Agent Zero's migration loads any plugin (`initialize.initialize_migration`'s start), put
the image's argus_supervisor plugin in place of a stale copy (helpers/install.py says why)."""

import os
from pathlib import Path

from helpers import cache, files
from helpers.extension import Extension
from helpers.print_style import PrintStyle
from plugins._argus_supervisor_upgrade.helpers import install


class ArgusSupervisorInstall(Extension):
    def execute(self, **kwargs):
        source = Path(os.environ.get(install.IMAGE_COPY) or install.DEFAULT_IMAGE_COPY)
        target = Path(files.get_abs_path(files.USER_DIR, files.PLUGINS_DIR))
        target.mkdir(parents=True, exist_ok=True)
        try:
            record = install.install(target, source)
        except OSError as e:
            PrintStyle.error(f"argus_supervisor: the image's plugin could not be installed: {e}")
            return
        if record["action"] != "none":
            PrintStyle().print(f"argus_supervisor: {record['action']} version {record['version']}"
                               f" (was {record['replaced_version'] or 'none'}; kept {', '.join(record['kept']) or 'nothing'})")
            # The loader's lists were read before the copy changed (the caches
            # plugins.clear_plugin_cache clears, without its browser notice: no page is open yet).
            for area in ("*(plugins)*", "*(extensions)*", "*(api)*"):
                cache.clear(area)
