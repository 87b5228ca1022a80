"""The campaign-control extension, served in front of a real A2A framework's dispatcher.

An ASGI wrapper: `campaign/*` JSON-RPC methods are answered here with real lease and epoch checks
(fencing tokens, the remote contract the supervisor is built for); `message/send` / `SendMessage` and
`tasks/cancel` / `CancelTask` carrying `metadata.argus_supervisor` are fenced and made idempotent by
request id here, then passed to the framework unchanged, so the framework itself parses our encoding.
Test double only: in-memory, single process.
"""

import json
import time

EXTENSION_URI = "urn:openoperator:campaign-control:v1"
OPERATIONS = {
    "claim_control": "campaign/claim_control",
    "read_control": "campaign/read_control",
    "renew_control": "campaign/renew_control",
    "release_control": "campaign/release_control",
    "intervene": "campaign/intervene",
    "request_status": "campaign/request_status",
}
ENVELOPE = {
    "execution": "remote_only",
    "publication": False,
    "destructive_git": False,
    "credential_change": False,
    "force_push": False,
    "merge": False,
}


def extension_params(cancel_method):
    ops = dict(OPERATIONS)
    ops["cancel"] = cancel_method
    return {"lease_epoch_enforced": True, "policy_enforced": True, "operations": ops}


async def read_body(receive):
    """A request's whole body, as an ASGI app receives it."""
    body, more = b"", True
    while more:
        msg = await receive()
        body += msg.get("body", b"")
        more = msg.get("more_body", False)
    return body


def replaying(body, receive):
    """The request's body, already read, given again to the framework; then the client's messages."""
    sent = False

    async def replay():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class Fenced(Exception):
    def __init__(self, code, message):
        self.code = code
        self.message = message


class CampaignControl:
    def __init__(self, app, rpc_path="/"):
        self.app = app
        self.rpc_path = rpc_path
        self.leases = {}  # campaign -> {"epoch": int, "lease": dict | None}
        self.requests = {}  # request id -> {"campaign", "method", "task_id", "answer"}
        self.stale_accepted = 0

    # ----- lease rules -------------------------------------------------------------------------
    def _campaign(self, cid):
        return self.leases.setdefault(cid, {"epoch": 0, "lease": None})

    def _live(self, c):
        lease = c["lease"]
        return lease if lease and lease["expires_at"] > time.time() else None

    def fence(self, meta):
        cid, who, epoch = meta.get("campaign_id"), meta.get("controller_id"), meta.get("controller_epoch")
        if not isinstance(cid, str) or not isinstance(who, str) or not isinstance(epoch, (int, float)):
            raise Fenced(-32602, "invalid params")
        if cid not in self.leases:
            raise Fenced(-32014, "unknown campaign")
        c = self.leases[cid]
        live = self._live(c)
        if live and live["controller_id"] != who:
            raise Fenced(-32010, "lease held by another controller")
        if live is None:
            if c["lease"] and c["lease"]["epoch"] == int(epoch) and c["lease"]["controller_id"] == who:
                raise Fenced(-32012, "lease expired")
            raise Fenced(-32011, "stale epoch")
        if live["epoch"] != int(epoch):
            raise Fenced(-32011, "stale epoch")

    def campaign_call(self, method, p):
        if not isinstance(p, dict):
            raise Fenced(-32602, "invalid params")
        if method == "campaign/claim_control":
            if p.get("constraints") != ENVELOPE:
                raise Fenced(-32013, "policy constraint violated")
            rid = p.get("request_id")
            if rid in self.requests:
                return self.requests[rid]["answer"]
            c = self._campaign(p["campaign_id"])
            live = self._live(c)
            if live and live["controller_id"] != p["controller_id"]:
                raise Fenced(-32010, "lease held by another controller")
            if not live:
                c["epoch"] += 1
                live = {"controller_id": p["controller_id"], "epoch": c["epoch"],
                        "expires_at": int(time.time()) + int(p["ttl_seconds"])}
                c["lease"] = live
            answer = {"lease": live}
            self.requests[rid] = {"campaign": p["campaign_id"], "method": method, "task_id": None, "answer": answer}
            return answer
        if method == "campaign/read_control":
            c = self.leases.get(p.get("campaign_id"))
            return {"lease": self._live(c) if c else None}
        if method == "campaign/request_status":
            r = self.requests.get(p.get("request_id"))
            if r and r["campaign"] == p.get("campaign_id"):
                out = {"request_id": p["request_id"], "state": "applied"}
                if r["task_id"]:
                    out["task_id"] = r["task_id"]
                return out
            return {"request_id": p.get("request_id"), "state": "not_applied"}
        rid = p.get("request_id")
        if rid in self.requests:
            return self.requests[rid]["answer"]
        self.fence(p)
        c = self.leases[p["campaign_id"]]
        if method == "campaign/renew_control":
            c["lease"]["expires_at"] = max(c["lease"]["expires_at"], int(time.time()) + int(p["ttl_seconds"]))
            answer = {"lease": c["lease"]}
        elif method == "campaign/release_control":
            c["lease"] = None
            answer = {"released": True}
        elif method == "campaign/intervene":
            answer = {"id": p.get("task_id"), "status": {"state": "working"}}
        else:
            raise Fenced(-32601, "method not found")
        self.requests[rid] = {"campaign": p["campaign_id"], "method": method, "task_id": None, "answer": answer}
        return answer

    # ----- ASGI ----------------------------------------------------------------------------------
    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != self.rpc_path:
            return await self.app(scope, receive, send)
        body = await read_body(receive)
        try:
            req = json.loads(body)
        except ValueError:
            req = None
        method = req.get("method") if isinstance(req, dict) else None
        params = req.get("params") if isinstance(req, dict) else None
        rpc_id = req.get("id") if isinstance(req, dict) else None
        try:
            if isinstance(method, str) and method.startswith("campaign/"):
                return await self.reply(send, rpc_id, result=self.campaign_call(method, params))
            meta = None
            if method in ("message/send", "SendMessage", "tasks/cancel", "CancelTask") and isinstance(params, dict):
                meta = (params.get("metadata") or {}).get("argus_supervisor")
            if meta:
                rid = meta.get("request_id")
                if rid in self.requests:
                    return await self.reply(send, rpc_id, result=self.requests[rid]["answer"])
                self.fence(meta)
        except Fenced as f:
            return await self.reply(send, rpc_id, error={"code": f.code, "message": f.message})
        if not meta:
            # Not ours to record: straight through, as it comes (a stream stays a stream).
            return await self.app(scope, replaying(body, receive), send)
        status, headers, chunks = await self.forward(scope, body, receive)
        if meta and status == 200:
            try:
                answer = json.loads(b"".join(chunks))
            except ValueError:
                answer = {}
            result = answer.get("result")
            if isinstance(result, dict):
                task = result.get("task") if isinstance(result.get("task"), dict) else result
                task_id = task.get("id") if method in ("message/send", "SendMessage") else params.get("id")
                self.requests[meta["request_id"]] = {"campaign": meta["campaign_id"], "method": method,
                                                     "task_id": task_id, "answer": result}
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b"".join(chunks)})

    async def forward(self, scope, body, receive):
        replay = replaying(body, receive)
        out = {"status": 500, "headers": [], "chunks": []}

        async def capture(message):
            if message["type"] == "http.response.start":
                out["status"] = message["status"]
                out["headers"] = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"content-length"]
            elif message["type"] == "http.response.body":
                out["chunks"].append(message.get("body", b""))

        await self.app(scope, replay, capture)
        return out["status"], out["headers"], out["chunks"]

    async def reply(self, send, rpc_id, result=None, error=None):
        envelope = {"jsonrpc": "2.0", "id": rpc_id}
        if error is not None:
            envelope["error"] = error
        else:
            envelope["result"] = result
        data = json.dumps(envelope).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": data})
