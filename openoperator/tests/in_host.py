"""Run inside an Agent Zero root (cwd), beside a running `run_ui.py`: Agent Zero's own loader,
profile registry, prompt resolver and tool lookup, and the plugin imported as Agent Zero imports
it (`usr.plugins.argus_supervisor…`). Prints one JSON line. Used by conftest.run_in_host."""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
import time


def agent_for(profile: str):
    from agent import AgentContext
    from initialize import initialize_agent

    return AgentContext(initialize_agent({"agent_profile": profile})).agent0


def loader() -> dict:
    from helpers import plugins, subagents

    tools_prompt = importlib.import_module("extensions.python.system_prompt._11_tools_prompt")
    out = {
        "listed": plugins.get_plugins_list(),
        "enabled": plugins.get_enabled_plugins(None),
        "dir": plugins.find_plugin_dir("argus_supervisor"),
        "profiles": sorted(subagents.get_agents_dict()),
    }
    for profile in ("argus-supervisor", "agent0"):
        agent = agent_for(profile)
        prompt = asyncio.run(tools_prompt.build_prompt(agent))
        tool = agent.get_tool(name="argus_supervisor", method=None, args={}, message="", loop_data=None)
        out[profile] = {"tools_prompt": prompt, "tool_class": type(tool).__name__}
        if profile == "argus-supervisor":
            out["verbs"] = list(type(tool).execute.__globals__["VERBS"])
    return out


def daemon_call(method: str, path: str, body=None):
    from usr.plugins.argus_supervisor.helpers import argus_supervisor_daemon as daemon

    return list(daemon.call(method, path, body))


def tool(args: dict) -> str:
    agent = agent_for("argus-supervisor")
    t = agent.get_tool(name="argus_supervisor", method=None, args=args, message="", loop_data=None)
    return asyncio.run(t.execute(**args)).message


def chat(calls: list) -> list:
    """Each tool call as the model would write it in Agent Zero's chat, through Agent Zero's own
    tool path (`Agent.process_tools`: the JSON parsed from the message, the tool looked up for the
    profile, its hooks and the tool_execute extensions run, the result added to the history); the
    tool result as the history holds it, one per call. One agent, as one chat."""
    agent = agent_for("argus-supervisor")

    async def run():
        out = []
        for args in calls:
            msg = json.dumps({"thoughts": ["the operator asked"], "headline": "argus",
                              "tool_name": "argus_supervisor", "tool_args": args})
            await agent.process_tools(msg)
            last = agent.history.current.messages[-1].content
            out.append(last["tool_result"] if isinstance(last, dict) else str(last))
        return out

    return asyncio.run(run())


def tool_beside_a_ticker(args: dict) -> dict:
    """The tool's call, with a 10 ms ticker on the same event loop: a blocking call stops it."""
    agent = agent_for("argus-supervisor")
    t = agent.get_tool(name="argus_supervisor", method=None, args=args, message="", loop_data=None)

    async def both():
        ticks = 0
        done = asyncio.Event()

        async def ticker():
            nonlocal ticks
            while not done.is_set():
                await asyncio.sleep(0.01)
                ticks += 1

        runner = asyncio.create_task(ticker())
        started = time.monotonic()
        answer = await t.execute(**args)
        elapsed = time.monotonic() - started
        done.set()
        await runner
        return {"message": answer.message, "elapsed": elapsed, "ticks": ticks}

    return asyncio.run(both())


if __name__ == "__main__":
    what, args = sys.argv[1], json.loads(sys.argv[2])
    print(json.dumps(globals()[what](*args)))
