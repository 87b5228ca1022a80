"""Stand-in for Agent Zero's helpers/extension.py: Extension and call_extensions over the plugins'
extensions/python/<point>/ files, in file-name order (the first file of a name wins)."""

from __future__ import annotations

import inspect
from abc import abstractmethod
from pathlib import Path
from typing import Any

PLUGIN_ROOTS: list[Path] = []


class Extension:
    def __init__(self, agent: Any = None, **kwargs):
        self.agent = agent
        self.kwargs = kwargs

    @abstractmethod
    async def execute(self, **kwargs) -> Any:
        pass


async def call_extensions(extension_point: str, agent: Any = None, **kwargs) -> Any:
    from helpers.api import load_classes_from_file

    unique: dict[str, type] = {}
    for root in PLUGIN_ROOTS:
        for plugin in sorted(p for p in root.iterdir() if (p / "plugin.yaml").is_file()):
            folder = plugin / "extensions" / "python" / extension_point
            for f in sorted(folder.glob("*.py")) if folder.is_dir() else []:
                for cls in load_classes_from_file(f, Extension):
                    unique.setdefault(f.name, cls)
    for name in sorted(unique):
        result = unique[name](agent=agent).execute(**kwargs)
        if inspect.isawaitable(result):
            await result
