"""Stand-in for Agent Zero's helpers/tool.py: Tool(agent, name, method, args, message, loop_data)
and its Response."""

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Response:
    message: str
    break_loop: bool
    additional: dict[str, Any] | None = field(default=None)


class Tool:
    def __init__(self, agent, name: str, method, args: dict, message: str, loop_data, **kwargs):
        self.agent = agent
        self.name = name
        self.method = method
        self.args = args
        self.message = message
        self.loop_data = loop_data

    async def execute(self, **kwargs) -> Response:
        raise NotImplementedError
