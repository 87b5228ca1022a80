"""A fake Argus MCP server (stdio) with the seven tool signatures and answer shapes of the real
`argus-plugin-server` (argus-skill 0.1.2: `project.sid` on create, list rows with `id`,
`display_name`, `label`, `workdir`; errors as `ok: false` with `error_code`). It stands in for what
the real one cannot do here: take a message as work (`kind: "task"`), which needs a model backend
(with $ARGUS_SKILL_HOME/not_dispatched present it answers as the real one without a backend).
State lives in $ARGUS_SKILL_HOME/fake-argus.json so a restarted client can re-attach; a test
scripts `argus_status` by writing $ARGUS_SKILL_HOME/status.json."""

import json
import os
from pathlib import Path

from mcp.server.fastmcp import FastMCP

HOME = Path(os.environ.get("ARGUS_SKILL_HOME", "."))
# The real server's recorded answers (tests/units/argus_bridge.rs keeps them true).
RECORDED = Path(__file__).resolve().parent.parent / "fixtures" / "argus-skill-0.1.2"


def recorded(name):
    return json.loads((RECORDED / f"{name}.json").read_text())
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


def error(code, message):
    return {"ok": False, "error_code": code, "error": message}


@mcp.tool()
def argus_project_create(workdir: str, name: str = "") -> dict:
    state = load()
    sid = f"s-{len(state['projects']) + 1:08x}"
    state["projects"].append({"id": sid, "display_name": name, "label": name, "workdir": workdir})
    save(state)
    return {"ok": True, "project": {"sid": sid, "rc": 0, "spawned": False, "objective": "", "workdir": workdir}}


@mcp.tool()
def argus_project_list(workdir: str = "") -> dict:
    rows = [p for p in load()["projects"] if not workdir or p["workdir"] == workdir]
    return {"ok": True, "projects": rows}


@mcp.tool()
def argus_message(project_id: str, text: str) -> dict:
    state = load()
    if not any(p["id"] == project_id for p in state["projects"]):
        return error("project_not_found", f"unknown Argus project: {project_id}")
    # A test takes the model backend away by creating this file: the real server's answer then.
    if (HOME / "not_dispatched").exists():
        return recorded("message_not_dispatched")
    state["messages"].append({"project_id": project_id, "text": text})
    save(state)
    return {"ok": True, "kind": "task", "reply": "Queued.", "daemon_alive": True}


@mcp.tool()
def argus_status(project_id: str) -> dict:
    # A test kills Argus mid-run by creating this file: the process dies on the next status call.
    if (HOME / "die").exists():
        os._exit(1)
    scripted = HOME / "status.json"
    status = recorded("status")["status"]
    if scripted.exists():
        status.update(json.loads(scripted.read_text()))
    return {"ok": True, "status": status}


@mcp.tool()
def argus_doctor(project_id: str) -> dict:
    return recorded("doctor")


@mcp.tool()
def argus_stop(project_id: str, force: bool = False) -> dict:
    return recorded("stop")


@mcp.tool()
def argus_artifacts(project_id: str) -> dict:
    return recorded("artifacts")


if __name__ == "__main__":
    mcp.run()
