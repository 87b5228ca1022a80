"""A double of Foreman's decision model only: a scripted HTTP server answering the OpenAI
provider's `POST /v1/decisions` in the wire shape recorded in vendor/foreman/FOREMAN.md §12
(`{"model", "input": "<state JSON>", "questions": [{"type": "predicate", "name", "instructions"}]}`
answered by `{"answers": [{"type": "predicate", "name", "probability"}], "usage": {...}}`, same
names, same order). The real Foreman (its responsibilities and policy) decides from these
probabilities.

    python decision_double.py DIR      # prints its base URL (`http://127.0.0.1:PORT/v1`) and serves

DIR/control.json, read on every request, steers it:
    {"probabilities": {"core.human-escalation__needs_human": 0.9, ...}, "default": 0.05,
     "mode": "ok" | "500" | "401" | "hang" | "garbage" | "refuse"}
DIR/requests.jsonl gets one line per request: its size, its Authorization header's presence, and
the request body as Foreman sent it (what the tests judge the evidence by).
"""

import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

DIR = Path(sys.argv[1])


def control():
    try:
        return json.loads((DIR / "control.json").read_text())
    except (OSError, ValueError):
        return {}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n)
        with open(DIR / "requests.jsonl", "a") as f:
            f.write(json.dumps({"path": self.path, "bytes": len(raw), "at": time.time(),
                                "authorized": bool(self.headers.get("Authorization")),
                                "body": raw.decode("utf-8", "replace")}) + "\n")
        ctl = control()
        mode = ctl.get("mode", "ok")
        if mode == "hang":
            time.sleep(600)
            return
        if mode == "500":
            return self.answer(500, {"error": {"message": "scripted failure at the provider"}})
        if mode == "401":
            return self.answer(401, {"error": {"message": "scripted: the key is refused"}})
        if mode == "garbage":
            return self.answer(200, "not a decision", content="text/html")
        try:
            questions = json.loads(raw)["questions"]
        except (ValueError, KeyError):
            return self.answer(400, {"error": {"message": "bad request"}})
        table = ctl.get("probabilities", {})
        default = ctl.get("default", 0.05)
        answers = [{"type": "predicate", "name": q["name"],
                    "probability": table.get(q["name"], default)} for q in questions]
        if mode == "refuse" and answers:
            # The provider's refusal shape: the named predicate answered with a refusal.
            answers[0] = {"type": "refusal", "name": answers[0]["name"],
                          "refusal": "scripted: I cannot assess this"}
        self.answer(200, {"model": "decision-double", "answers": answers,
                          "usage": {"input_tokens": len(raw) // 4, "output_tokens": len(answers)}})

    def answer(self, code, body, content="application/json"):
        data = (json.dumps(body) if content.endswith("json") else str(body)).encode()
        self.send_response(code)
        self.send_header("Content-Type", content)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


if __name__ == "__main__":
    DIR.mkdir(parents=True, exist_ok=True)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    server.serve_forever()
