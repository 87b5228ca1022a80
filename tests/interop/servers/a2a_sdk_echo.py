"""An echo agent on the official a2a-sdk (1.x): submitted -> working -> completed with an artifact;
cancellable while working; with `--ask`, input-required instead; with `--script`, whatever steps a
test posts to `POST /_script/<task id>` (`scripted.py`), as a plain A2A agent: no campaign metadata. `--streaming` says so on the card. `--mode v03` declares a 0.3 JSON-RPC interface and enables the SDK's 0.3
compatibility; `--mode v1` declares 1.0 only. `--extension` advertises and serves the
campaign-control extension in front of the SDK's dispatcher."""

import argparse
import asyncio

import uvicorn
from starlette.applications import Starlette

from a2a.server.agent_execution import AgentExecutor
from a2a.server.request_handlers import DefaultRequestHandlerV2
from a2a.server.routes.agent_card_routes import create_agent_card_routes
from a2a.server.routes.jsonrpc_routes import create_jsonrpc_routes
from a2a.server.tasks.inmemory_task_store import InMemoryTaskStore
from a2a.server.tasks.task_updater import TaskUpdater
from a2a.helpers.proto_helpers import new_task
from a2a.types import AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentSkill, Part, TaskState

import campaign_ext
import method_log
import scripted

DELAY = 1.0
ASK = False
SCRIPT = None
STATES = {
    "working": TaskState.TASK_STATE_WORKING,
    "input-required": TaskState.TASK_STATE_INPUT_REQUIRED,
    "completed": TaskState.TASK_STATE_COMPLETED,
    "failed": TaskState.TASK_STATE_FAILED,
}
class Echo(AgentExecutor):
    async def execute(self, context, event_queue):
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        if context.current_task is None:
            # The SDK wants the Task itself first, then status updates.
            await event_queue.enqueue_event(
                new_task(context.task_id, context.context_id, TaskState.TASK_STATE_SUBMITTED, history=[context.message])
            )
        if SCRIPT is not None:
            return await self.follow_script(context, updater)
        await updater.start_work()
        await asyncio.sleep(DELAY)
        if ASK:
            await updater.requires_input()
            return
        await updater.add_artifact([Part(text="echo: " + context.get_user_input())], name="echo")
        await updater.complete()

    async def follow_script(self, context, updater):
        steps = SCRIPT.queue(context.task_id)
        state = TaskState.TASK_STATE_SUBMITTED
        while state not in (TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED):
            step = await steps.get()
            if "noise" in step:
                for text in scripted.noise(step["noise"]):
                    await updater.update_status(state, message=updater.new_agent_message([Part(text=text)]))
                continue
            state = STATES[step["state"]]
            said = updater.new_agent_message([Part(text=step["text"])]) if step.get("text") else None
            await updater.update_status(state, message=said)

    async def cancel(self, context, event_queue):
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


def main():
    global DELAY, ASK, SCRIPT
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--mode", choices=["v03", "v1"], required=True)
    ap.add_argument("--extension", action="store_true")
    ap.add_argument("--delay", type=float, default=1.0)
    ap.add_argument("--ask", action="store_true", help="ask for input after the delay instead of answering")
    ap.add_argument("--streaming", action="store_true", help="say capabilities.streaming (SubscribeToTask streams)")
    ap.add_argument("--method-log", help="append each JSON-RPC method received to this file")
    ap.add_argument("--script", action="store_true", help="each task follows the steps a test posts to /_script/<task id>")
    args = ap.parse_args()
    DELAY = args.delay
    ASK = args.ask
    url = f"http://127.0.0.1:{args.port}/"
    interfaces = [AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")]
    if args.mode == "v03":
        interfaces.append(AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="0.3"))
    extensions = []
    if args.extension:
        cancel = "tasks/cancel" if args.mode == "v03" else "CancelTask"
        extensions.append(AgentExtension(uri=campaign_ext.EXTENSION_URI, description="campaign control",
                                         required=False, params=campaign_ext.extension_params(cancel)))
    card = AgentCard(
        name="Echo (a2a-sdk)",
        description="Echoes the message.",
        version="1.0.0",
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(streaming=args.streaming, push_notifications=False, extensions=extensions),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes the message.", tags=["echo"])],
    )
    handler = DefaultRequestHandlerV2(agent_executor=Echo(), task_store=InMemoryTaskStore(), agent_card=card)
    routes = create_agent_card_routes(card) + create_jsonrpc_routes(handler, "/", enable_v0_3_compat=args.mode == "v03")
    app = Starlette(routes=routes)
    if args.extension:
        app = campaign_ext.CampaignControl(app)
    if args.method_log:
        app = method_log.MethodLog(app, args.method_log)
    if args.script:
        app = SCRIPT = scripted.Script(app)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
