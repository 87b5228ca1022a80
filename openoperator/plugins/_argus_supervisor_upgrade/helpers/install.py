"""The argus_supervisor plugin as the image carries it, installed where Agent Zero loads it.

Agent Zero loads user plugins from /a0/usr/plugins, and a deployment keeps /a0/usr on a volume
(a Hugging Face Space's persistent storage): the image's new plugin copied there at build time is
hidden behind the volume's old copy, and an upgrade would silently run old code. So the image
keeps its copy outside /a0/usr (`ARGUS_SUPERVISOR_PLUGIN_IMAGE_COPY`, /opt/argus-supervisor/plugin
in openoperator/Dockerfile), and this runs at the start of Agent Zero's migration, before any
plugin's code is loaded: when the installed copy's files differ from the image's, the image's copy
replaces it whole. Kept: the operator's settings (`config.json`) and toggles (`.toggle-*`). The
copy it replaced stays beside it, hidden from the loader, as `.argus_supervisor.previous`.
`.installed.json` in the plugin says what was installed, when, and what it replaced."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

NAME = "argus_supervisor"
IMAGE_COPY = "ARGUS_SUPERVISOR_PLUGIN_IMAGE_COPY"
DEFAULT_IMAGE_COPY = "/opt/argus-supervisor/plugin"
MARKER = ".installed.json"
# The operator's, never the image's: carried over into the new copy.
KEPT = ("config.json", ".toggle-0", ".toggle-1")
SKIPPED = ("__pycache__",)


def _files(tree: Path) -> list[Path]:
    return sorted(p for p in tree.rglob("*") if p.is_file()
                  and not any(part in SKIPPED for part in p.relative_to(tree).parts)
                  and p.relative_to(tree).as_posix() not in (*KEPT, MARKER))


def digest(tree: Path) -> str:
    """The plugin's code and assets (not the operator's files): paths and contents."""
    h = hashlib.sha256()
    for p in _files(tree):
        h.update(p.relative_to(tree).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def version(tree: Path) -> str | None:
    try:
        for line in (tree / "plugin.yaml").read_text(encoding="utf-8").splitlines():
            if line.startswith("version:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def install(plugins_dir: Path, source: Path) -> dict:
    """Make `plugins_dir/argus_supervisor` the image's copy; what was done, as a record."""
    target = plugins_dir / NAME
    if not (source / "plugin.yaml").is_file():
        return {"action": "none", "why": f"no image copy at {source}"}
    want = digest(source)
    if target.is_dir() and digest(target) == want:
        return {"action": "none", "why": "the installed copy is the image's", "version": version(target)}
    replaced = version(target) if target.is_dir() else None
    stage = plugins_dir / f".{NAME}.new"
    previous = plugins_dir / f".{NAME}.previous"
    shutil.rmtree(stage, ignore_errors=True)
    shutil.copytree(source, stage, ignore=shutil.ignore_patterns(*SKIPPED))
    kept = []
    for name in KEPT:
        if (target / name).is_file():
            shutil.copy2(target / name, stage / name)
            kept.append(name)
    record = {"action": "installed" if replaced is None and not target.is_dir() else "replaced",
              "version": version(source), "digest": want, "replaced_version": replaced,
              "kept": kept, "at": int(time.time())}
    (stage / MARKER).write_text(json.dumps(record), encoding="utf-8")
    if target.is_dir():
        shutil.rmtree(previous, ignore_errors=True)
        os.replace(target, previous)
    os.replace(stage, target)
    return record


def installed(plugin_dir: Path) -> dict:
    """What the running plugin is: its version and digest, and its install record."""
    try:
        record = json.loads((plugin_dir / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = None
    return {"version": version(plugin_dir), "digest": digest(plugin_dir), "install": record}
