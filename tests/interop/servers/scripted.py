"""`--script` for the echo agents: a task follows the steps a test posts to
`POST /_script/<task id>` instead of answering on its own — `{"state": ..., "text": ...}` (a state
the framework knows, with the agent's words for it: a question, an answer), or `{"noise": N}` (N
more agent messages of progress lines, tool output and markup, the state kept). Each framework
applies a step its own way (fasta2a to its storage, a2a-sdk through its task updater), as a plain
A2A agent: no campaign metadata, no revision, no stage."""

import asyncio
import json

from campaign_ext import read_body

NOISE = ("step {i}/500 loss=0.{i:03d}\n$ python train.py --epoch {i}\n<tool_output>"
         "<script>alert({i})</script></tool_output> **progress** {i}%")


def noise(n):
    """The text of `n` noisy agent messages."""
    return [NOISE.format(i=i) for i in range(int(n))]


class Script:
    """The steps of each task, as the test posts them."""

    def __init__(self, app):
        self.app = app
        self.steps = {}

    def queue(self, task_id):
        return self.steps.setdefault(task_id, asyncio.Queue())

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        if scope["type"] != "http" or not path.startswith("/_script/"):
            return await self.app(scope, receive, send)
        await self.queue(path[len("/_script/"):]).put(json.loads(await read_body(receive)))
        await send({"type": "http.response.start", "status": 200, "headers": [[b"content-type", b"text/plain"]]})
        await send({"type": "http.response.body", "body": b"ok"})
