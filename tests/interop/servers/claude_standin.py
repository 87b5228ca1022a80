"""A double of the model CLI only: a scripted stand-in for `claude` under the REAL Argus runtime
(argus-skill 0.1.2's `argus-plugin-server` and the daemon it starts). Argus runs its own
Manager/Planner/Engineer/Reviewer loop; only the model's answers are scripted here, in the shapes
vendor/argus-skill/DISPATCH.md recorded (stream-json events, one `ARGUS_ROLE_DECISION=` line per
role turn). Pinned to argus-skill 0.1.2's prompt wording.

Its directory is $STANDIN_DIR (the test's wrapper script sets it):
  calls.jsonl      one line per call: role, run, argv tail, prompt bytes, cwd, time (the test's
                   own count of model turns, never the supervisor's counters)
  prompts/         each prompt as received (the test checks what Argus was given)
  control.json     optional, read on every call, steers verdicts and decisions:
    {"reviewer": {"status": "done"|"continue"|..., "operator_question": ..., "operator_options": [...]},
     "decision": "auto"|"none"|{"kind": ...}, "engineer_sleep": seconds, "fail_auth": true}
  sessions/<sid>   the role of each session, so a resumed turn (`--resume SID`, delta prompt) is
                   answered as the role it continues.
"""

import json
import os
import re
import sys
import time
import uuid
from pathlib import Path

HOME = Path(os.environ.get("STANDIN_DIR", "."))
MARK = 'ARGUS_ROLE_DECISION={"role":"'


def control():
    try:
        return json.loads((HOME / "control.json").read_text())
    except (OSError, ValueError):
        return {}


def log(entry):
    HOME.mkdir(parents=True, exist_ok=True)
    entry["at"] = time.time()
    entry["pid"] = os.getpid()
    with open(HOME / "calls.jsonl", "a") as f:
        f.write(json.dumps(entry) + "\n")


def arg(argv, name):
    return argv[argv.index(name) + 1] if name in argv and argv.index(name) + 1 < len(argv) else None


def role_of(prompt, resumed):
    """The role the prompt asks for, by its example line (the last one), or the resumed one."""
    at = prompt.rfind(MARK)
    if at >= 0:
        role = prompt[at + len(MARK):].split('"', 1)[0]
        example = prompt[at:at + 600]
        if role == "manager":
            for key, label in (
                ('"route"', "manager-route"),
                ('"choice"', "manager-vertical"),
                ('"research_target_level"', "manager-research-level"),
                ('"action":"hold"', "manager-stage"),
            ):
                if key in example:
                    return label
            return "manager-other"
        return role
    if "IS_ANSWER=true|false" in prompt:
        return "manager-answer"
    if "ACTION=no_action" in prompt:
        return "manager-maintenance"
    return resumed or "other"


def after(prompt, marker):
    at = prompt.find(marker)
    return prompt[at + len(marker):].strip() if at >= 0 else ""


def operator_message(prompt):
    """The operator's message in a Manager prompt: after its marker, up to the instructions that
    follow it (argus-skill 0.1.2's wording)."""
    text = after(prompt, "[CURRENT OPERATOR MESSAGE]") or after(prompt, "## Task") or prompt
    ends = [text.find(m) for m in ("\n\nResearch-target verticals", "\n\nThe payload uses",
                                   "\n\nWhen the decision is clear", "\n\n## ")]
    ends = [e for e in ends if e >= 0]
    return text[:min(ends)].strip() if ends else text.strip()


def decision_for(prompt, ctl):
    """The Engineer's decision file, when its mission carries a decision-worthy event."""
    m = re.search(r"Decision-worthy event for campaign ([A-Za-z0-9._-]+)", prompt)
    if not m or ctl.get("decision") == "none":
        return None
    campaign = m.group(1)
    attempts = re.search(r"Attempts so far: (\d+)", prompt)
    attempts = int(attempts.group(1)) if attempts else 0
    chosen = ctl.get("decision", "auto")
    if isinstance(chosen, dict):
        kind = chosen.get("kind", "retry")
    elif "ATTEMPT_COMPLETED" in prompt and '"outcome":"failed"' in prompt:
        kind = "retry"
    elif "ATTEMPT_COMPLETED" in prompt and '"outcome":"completed"' in prompt:
        kind = "finish"
    else:
        return None
    did = f"d-{campaign}-{attempts + 1}-{uuid.uuid4().hex[:8]}"
    body = {
        "decision_id": did,
        "kind": kind,
        "reason": "Scripted stand-in decision.",
        "attempt": attempts + (1 if kind in ("retry", "submit") else 0),
    }
    if kind in ("retry", "submit", "intervene"):
        body["objective"] = "Repair the dataset loader and run the training task again."
    return did, body


def answer(role, prompt, ctl, argv):
    """The assistant text for one turn, and whether the stream shows tool activity."""
    if role == "manager-route":
        payload = {"config": "NONE", "control": "NONE", "authorization": "NONE",
                   "steer_directive": "NONE", "route": "TEAM", "self_mode": "NONE",
                   "reply": "NONE", "lifetime": "BOUNDED", "greeting": "NONE",
                   "name": "Relay the decision"}
        return f"ARGUS_ROLE_DECISION={json.dumps({'role': 'manager', 'payload': payload})}", False
    if role == "manager-vertical":
        payload = {"choice": "existing", "vertical": "software", "domain": "",
                   "workflow_mode": "direct", "confidence": 0.9, "rationale": "scripted",
                   "execution_task": operator_message(prompt)[:4000]}
        return f"ARGUS_ROLE_DECISION={json.dumps({'role': 'manager', 'payload': payload})}", False
    if role == "manager-research-level":
        payload = {"research_target_level": "engineering", "rationale": "scripted"}
        return f"ARGUS_ROLE_DECISION={json.dumps({'role': 'manager', 'payload': payload})}", False
    if role == "manager-stage":
        payload = {"action": "hold", "target_stage": "current stage", "reason": "scripted"}
        return f"ARGUS_ROLE_DECISION={json.dumps({'role': 'manager', 'payload': payload})}", False
    if role == "manager-answer":
        said = after(prompt, "Operator answer to your question:")[:500] or "proceed"
        return f"IS_ANSWER=true\nRESOLVED=true\nDECISION={' '.join(said.split())}\nREPLY=Understood.", False
    if role == "manager-maintenance":
        return "ACTION=no_action\nREASON=scripted stand-in", False
    if role == "planner":
        objective = after(prompt, "Manager execution handoff:") or operator_message(prompt)
        payload = {"project_done": False, "reason": "scripted plan", "tasks": [{
            "key": "k1", "deps": [], "title": "Relay the decision",
            "objective": objective[:20000], "scope": "bounded",
            "require_independent_review": True}]}
        return f"ARGUS_ROLE_DECISION={json.dumps({'role': 'planner', 'payload': payload})}", False
    if role == "engineer":
        pause = float(ctl.get("engineer_sleep", 0) or 0)
        if pause:
            time.sleep(pause)
        made = decision_for(prompt, ctl)
        result = "no decision needed"
        if made:
            did, body = made
            d = Path.cwd() / "decisions"
            d.mkdir(parents=True, exist_ok=True)
            tmp = d / f".{did}.tmp"
            tmp.write_text(json.dumps(body))
            os.replace(tmp, d / f"{did}.json")
            result = f"wrote {d / (did + '.json')}"
            log({"role": "engineer-decision", "decision": body})
        payload = {"status": "done", "result": result, "next_owner": "reviewer"}
        return f"ARGUS_ROLE_DECISION={json.dumps({'role': 'engineer', 'payload': payload})}", False
    if role == "reviewer":
        r = ctl.get("reviewer") or {}
        payload = {"status": r.get("status", "done"), "reason": r.get("reason", "checked the decision file"),
                   "next_action": "", "forward_progress": True, "plan_signal": "continue"}
        if "operator_question" in r:
            payload["operator_question"] = r["operator_question"]
            payload["operator_options"] = [
                {"id": f"o{i}", "label": o} for i, o in enumerate(r.get("operator_options", []), 1)]
            # Argus asks a person only about what it marks as the operator's to decide.
            payload["authority_impact"] = "operator"
        return f"ARGUS_ROLE_DECISION={json.dumps({'role': 'reviewer', 'payload': payload})}", True
    return "no edit", False


def main(argv):
    ctl = control()
    if "--version" in argv:
        print("2.1.0 (Claude Code)")
        log({"role": "version"})
        return 0
    if argv[:2] == ["auth", "status"]:
        log({"role": "auth"})
        if ctl.get("fail_auth"):
            print("not logged in", file=sys.stderr)
            return 1
        print(json.dumps({"loggedIn": True, "authMethod": "subscription"}))
        return 0
    prompt = arg(argv, "-p") or ""
    resume = arg(argv, "--resume")
    sessions = HOME / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    resumed = None
    if resume and (sessions / resume).exists():
        resumed = (sessions / resume).read_text().strip()
    role = role_of(prompt, resumed)
    sid = resume or str(uuid.uuid4())
    (sessions / sid).write_text(role.split("-")[0] if role.startswith(("engineer", "reviewer", "planner")) else role)
    n = len(list((HOME / "prompts").glob("*.txt"))) if (HOME / "prompts").exists() else 0
    (HOME / "prompts").mkdir(parents=True, exist_ok=True)
    (HOME / "prompts" / f"{n:04d}-{role}.txt").write_text(prompt)
    log({"role": role, "resumed": bool(resume), "prompt_bytes": len(prompt.encode()),
         "cwd": os.getcwd(), "argv": [a for a in argv if a != prompt][:24]})
    text, tools = answer(role, prompt, ctl, argv)
    out = [{"type": "system", "subtype": "init", "session_id": sid, "model": "claude-standin"}]
    if tools:
        tid = "toolu_" + uuid.uuid4().hex[:12]
        out.append({"type": "assistant", "session_id": sid, "message": {"content": [
            {"type": "tool_use", "id": tid, "name": "Read", "input": {"file_path": "decisions"}}]}})
        out.append({"type": "user", "session_id": sid, "message": {"content": [
            {"type": "tool_result", "tool_use_id": tid, "content": "checked"}]}})
    out.append({"type": "assistant", "session_id": sid,
                "message": {"content": [{"type": "text", "text": text}]}})
    out.append({"type": "result", "subtype": "success", "is_error": False, "result": text,
                "session_id": sid, "usage": {"input_tokens": 1, "output_tokens": 1}})
    for e in out:
        print(json.dumps(e), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
