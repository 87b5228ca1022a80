"""An echo agent on fasta2a (0.5.0 or 2.1.1, whichever the venv has): submitted -> working ->
completed with an artifact (or, with `--ask`, input-required); cancellable while working. `--extension` (2.1.1 only) advertises and
serves the campaign-control extension in front of fasta2a's dispatcher.

`--script`: each task instead waits for the steps a test posts to `POST /_script/<task id>`
(`{"state": "working" | "input-required" | "completed" | "failed", "text": ...}`, or
`{"noise": N}`), applied through fasta2a's own storage as a plain A2A agent would: no campaign
metadata, a question or an answer only as an agent message in the task's history (fasta2a has no
status message), noise as N more agent messages of progress lines, tool output and markup."""

import argparse
import uuid
from contextlib import asynccontextmanager

import anyio
import uvicorn
from fasta2a import FastA2A, Worker
from fasta2a.broker import InMemoryBroker
from fasta2a.storage import InMemoryStorage

import campaign_ext
import method_log
import scripted


def agent_message(text):
    return {"role": "agent", "kind": "message", "message_id": str(uuid.uuid4()),
            "parts": [{"kind": "text", "text": text}]}


class EchoWorker(Worker):
    delay = 1.0
    ask = False
    script = None

    async def follow_script(self, task_id):
        state = "submitted"
        steps = self.script.queue(task_id)
        while state not in ("completed", "failed", "canceled"):
            step = await steps.get()
            if "noise" in step:
                said = [agent_message(t) for t in scripted.noise(step["noise"])]
                await self.storage.update_task(task_id, state=state, new_messages=said)
                continue
            state = step["state"]
            said = [agent_message(step["text"])] if step.get("text") else None
            await self.storage.update_task(task_id, state=state, new_messages=said)

    async def run_task(self, params):
        task_id = params["id"]
        if self.script is not None:
            return await self.follow_script(task_id)
        task = await self.storage.update_task(task_id, state="working")
        if hasattr(self, "publish_status"):  # 2.1.1: the task's stream hears of it
            await self.publish_status(task_id, task["context_id"], "working")
        await anyio.sleep(self.delay)
        if self.ask:
            # Waits on the client: the state that ends fasta2a's stream of the task.
            await self.storage.update_task(task_id, state="input-required")
            return
        task = await self.storage.load_task(task_id)
        if task is None or task["status"]["state"] in ("canceled", "failed"):
            return
        parts = params["message"].get("parts", [])
        text = " ".join(p.get("text", "") for p in parts if isinstance(p, dict))
        artifact = {"artifact_id": str(uuid.uuid4()), "name": "echo", "parts": [{"kind": "text", "text": "echo: " + text}]}
        await self.storage.update_task(task_id, state="completed", new_artifacts=[artifact])

    async def cancel_task(self, params):
        await self.storage.update_task(params["id"], state="canceled")

    def build_message_history(self, history):
        return history

    def build_artifacts(self, result):
        return []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--extension", action="store_true")
    ap.add_argument("--delay", type=float, default=1.0)
    ap.add_argument("--ask", action="store_true", help="ask for input after the delay instead of answering")
    ap.add_argument("--method-log", help="append each JSON-RPC method received to this file")
    ap.add_argument("--script", action="store_true", help="each task follows the steps a test posts to /_script/<task id>")
    args = ap.parse_args()
    storage, broker = InMemoryStorage(), InMemoryBroker()
    worker = EchoWorker(broker=broker, storage=storage)
    EchoWorker.delay = args.delay
    EchoWorker.ask = args.ask

    @asynccontextmanager
    async def lifespan(app):
        async with app.task_manager:
            async with worker.run():
                yield

    skill = {"id": "echo", "name": "Echo", "description": "Echoes the message.", "tags": ["echo"],
             "input_modes": ["text/plain"], "output_modes": ["text/plain"]}
    kwargs = dict(storage=storage, broker=broker, name="Echo (fasta2a)", url=f"http://127.0.0.1:{args.port}",
                  skills=[skill], lifespan=lifespan)
    if args.extension:
        kwargs["extensions"] = [{"uri": campaign_ext.EXTENSION_URI, "description": "campaign control",
                                 "required": False, "params": campaign_ext.extension_params("tasks/cancel")}]
    app = FastA2A(**kwargs)
    if args.extension:
        app = campaign_ext.CampaignControl(app)
    if args.method_log:
        app = method_log.MethodLog(app, args.method_log)
    if args.script:
        app = EchoWorker.script = scripted.Script(app)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
