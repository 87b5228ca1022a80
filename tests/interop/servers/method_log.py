"""`--method-log PATH`: every JSON-RPC method a server receives, one per line, appended to PATH before
the framework sees the request. Tests judge what a client *sent* by it (e.g. that `qualify` sent no
write to a remote without campaign control)."""

import json

from campaign_ext import read_body, replaying


class MethodLog:
    def __init__(self, app, path):
        self.app = app
        self.path = path

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        body = await read_body(receive)
        try:
            method = json.loads(body).get("method")
        except (ValueError, AttributeError):
            method = None
        with open(self.path, "a") as log:
            log.write(f"{method if isinstance(method, str) else '(not JSON-RPC)'}\n")
        await self.app(scope, replaying(body, receive), send)
