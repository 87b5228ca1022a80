"""A fake Argus MCP server (stdio) with the seven tool signatures and answer shapes of the real
`argus-plugin-server`. State lives in $ARGUS_SKILL_HOME/fake-argus.json so a restarted client can
re-attach; a test scripts `argus_status` by writing $ARGUS_SKILL_HOME/status.json."""

import json
import os
from pathlib import Path

from mcp.server.fastmcp import FastMCP

HOME = Path(os.environ.get("ARGUS_SKILL_HOME", "."))
STATE = HOME / "fake-argus.json"
HOME.mkdir(parents=True, exist_ok=True)
(HOME / "env.json").write_text(json.dumps(dict(os.environ)))

mcp = FastMCP("argus")


def load():
    if STATE.exists():
        return json.loads(STATE.read_text())
    return {"projects": [], "messages": []}


def save(state):
    # Atomic: readers (the tests) never see a half-written file.
    tmp = STATE.with_suffix(".tmp")
    tmp.write_text(json.dumps(state))
    os.replace(tmp, STATE)


@mcp.tool()
def argus_project_create(workdir: str, name: str) -> dict:
    state = load()
    pid = f"p-{len(state['projects']) + 1}"
    state["projects"].append({"project_id": pid, "name": name, "workdir": workdir})
    save(state)
    return {"ok": True, "project_id": pid}


@mcp.tool()
def argus_project_list(workdir: str) -> dict:
    return {"ok": True, "projects": [p for p in load()["projects"] if p["workdir"] == workdir]}


@mcp.tool()
def argus_message(project_id: str, text: str) -> dict:
    state = load()
    if not any(p["project_id"] == project_id for p in state["projects"]):
        return {"ok": False, "error": "unknown project"}
    state["messages"].append({"project_id": project_id, "text": text})
    save(state)
    return {"ok": True}


@mcp.tool()
def argus_status(project_id: str) -> dict:
    # A test kills Argus mid-run by creating this file: the process dies on the next status call.
    if (HOME / "die").exists():
        os._exit(1)
    scripted = HOME / "status.json"
    status = json.loads(scripted.read_text()) if scripted.exists() else {
        "pending_questions": [],
        "continuous": {"enabled": True, "objective": "", "done_reason": None, "done_at": None},
        "backlog_pending": [],
        "daemon": {"running": True},
        "active_role": "manager",
    }
    return {"ok": True, "status": status}


@mcp.tool()
def argus_doctor(project_id: str) -> dict:
    return {"ok": True, "checks": []}


@mcp.tool()
def argus_stop(project_id: str, force: bool) -> dict:
    return {"ok": True, "stopped": True}


@mcp.tool()
def argus_artifacts(project_id: str) -> dict:
    return {"ok": True, "artifacts": []}


if __name__ == "__main__":
    mcp.run()
