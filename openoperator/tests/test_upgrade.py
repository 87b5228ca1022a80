"""A deployment's /a0/usr is a volume that outlives the image: the plugin a new image brings must
run even when the volume holds an older copy, and the operator's settings must survive. Here the
volume is a directory the test fills as an older release left it, under the real OpenOperator."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import PLUGIN, run_in_host


def test_an_older_plugin_on_the_volume_is_replaced_by_the_images_and_settings_are_kept(agent_zero, tmp_path):
    a0 = agent_zero(start=False)
    volume = a0.root / "usr" / "plugins"
    old = volume / "argus_supervisor"
    # What an older image left on the volume: its own code (version 0.1.0, a tool without the
    # duties this one has), and the operator's settings and toggle.
    shutil.copytree(PLUGIN, old, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = old / "plugin.yaml"
    manifest.write_text(manifest.read_text().replace("version: 0.2.0", "version: 0.1.0"))
    tool = old / "agents" / "argus-supervisor" / "tools" / "argus_supervisor.py"
    tool.write_text(tool.read_text().replace('"evidence": (', '"evidence_removed": ('))
    (old / "config.json").write_text(json.dumps({"operator": "setting"}))
    (old / ".toggle-1").write_text("")
    a0.start()
    from conftest import wait_for

    wait_for("the daemon to be ready", a0.daemon_ready, 60, 0.3)
    s = a0.session()
    status, health = a0.post(s, "health")
    assert status == 200, health
    plugin = health["plugin"]
    # The image's plugin runs, and health says which: its version, and what it replaced.
    assert plugin["version"] == "0.2.0", plugin
    assert plugin["install"]["action"] == "replaced" and plugin["install"]["replaced_version"] == "0.1.0", plugin
    assert sorted(plugin["install"]["kept"]) == [".toggle-1", "config.json"], plugin
    assert json.loads((old / "config.json").read_text()) == {"operator": "setting"}
    assert "evidence_removed" not in tool.read_text()
    # The tool that runs is the new one (the old lacked `evidence`).
    assert "evidence" in run_in_host(a0, "loader")["verbs"]
    # The replaced copy is kept beside it, hidden from the loader.
    previous = volume / ".argus_supervisor.previous"
    assert "version: 0.1.0" in (previous / "plugin.yaml").read_text()
    assert "argus_supervisor" in run_in_host(a0, "loader")["enabled"]
    # Started again on the same volume: nothing to replace, the record stays.
    at = plugin["install"]["at"]
    a0.stop()
    again = agent_zero(root=a0.root)
    _, health = again.post(again.session(), "health")
    assert health["plugin"]["install"]["at"] == at and health["plugin"]["version"] == "0.2.0", health["plugin"]
    assert health["plugin"]["digest"] == plugin["digest"]


def test_a_fresh_volume_gets_the_plugin_installed(a0):
    _, health = a0.post(a0.session(), "health")
    assert health["plugin"]["install"]["action"] == "installed", health["plugin"]
    assert health["plugin"]["install"]["replaced_version"] is None
    # The copy that runs is the one installed: the same digest, by the installer's one function.
    assert health["plugin"]["digest"] == health["plugin"]["install"]["digest"], health["plugin"]
    assert Path(health["plugin"]["dir"]) == a0.root / "usr" / "plugins" / "argus_supervisor"
