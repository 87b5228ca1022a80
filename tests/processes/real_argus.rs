//! Issue 33: `serve` with the real Argus runtime — `argus-plugin-server` from the vendored
//! argus-skill 0.1.2 (vendor/argus-skill), installed by scripts/test.sh in its own venv — never
//! only our fake. Without a model backend (the case here) the real server creates, lists and
//! reports projects, and answers every message "[not dispatched]": the campaign must be bound to
//! one real project (found again after a restart or a kill before the binding was kept), and Argus
//! must be said to be degraded, never "running", while it takes no wake.

use super::serve_loop::{serve, sim, tmp, wait_for, Daemon, API_TOKEN, SIM_TOKEN};
use crate::support::procs::{executable, real_argus_server};
use serde_json::json;
use std::path::Path;

/// The projects the real runtime keeps under its home (`<ARGUS_SKILL_HOME>/projects/<sid>`).
fn real_projects(argus_home: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(argus_home.join("projects"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    ids
}

/// The shared skills the real runtime lists under `argus_home` (its own `SkillStore`).
fn real_skills(argus_home: &Path) -> String {
    let python = real_argus_server().with_file_name("python");
    let out = std::process::Command::new(python)
        .args([
            "-c",
            "from argus_skill.core import paths; from argus_skill.skills.store import SkillStore; \
             print([r['name'] for r in SkillStore(paths.shared_skills_root()).list_summaries()])",
        ])
        .env("ARGUS_SKILL_HOME", argus_home)
        .output()
        .expect("the real runtime's python");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn bound_project(d: &Daemon, id: &str) -> Option<String> {
    d.get(&format!("/campaigns/{id}"))
        .and_then(|(_, v)| v["argus_project_id"].as_str().map(str::to_string))
}

fn degraded_notices(d: &Daemon, id: &str) -> usize {
    d.feed(id)
        .iter()
        .filter(|l| l.contains("Argus is not taking this campaign's wakes"))
        .count()
}

#[test]
fn serve_binds_a_campaign_to_one_real_argus_project_and_says_argus_cannot_act() {
    let dir = tmp("real-argus");
    let (_sim, url) = sim("happy", "127.0.0.1:0");
    let (home, argus_home) = (dir.join("state"), dir.join("argus-home"));
    // The real server behind a wrapper that records the environment it is given.
    let wrapper = dir.join("argus-plugin-server");
    let seen = dir.join("argus-env.txt");
    executable(
        &wrapper,
        &format!(
            "env > {}\nexec {} \"$@\"",
            seen.display(),
            real_argus_server().display()
        ),
    );
    // Foreman says ESCALATE on every event it is shown.
    let foreman = dir.join("foreman");
    executable(
        &foreman,
        "cat > /dev/null\necho '{\"action\": \"ESCALATE\", \"reason\": \"loss diverged\", \"confidence\": 0.9}'",
    );
    let env = [
        ("ARGUS_SUPERVISOR_FOREMAN_ENABLED", "1".to_string()),
        (
            "ARGUS_SUPERVISOR_FOREMAN_BIN",
            foreman.display().to_string(),
        ),
        ("ARGUS_SUPERVISOR_ARGUS_BIN", wrapper.display().to_string()),
        (
            "ARGUS_SUPERVISOR_ARGUS_HOME",
            argus_home.display().to_string(),
        ),
        ("ARGUS_SUPERVISOR_BACKEND", "codex".to_string()),
        (
            "ARGUS_SUPERVISOR_ARGUS_ENV",
            "ARGUS_TEST_MODEL_KEY".to_string(),
        ),
        ("ARGUS_TEST_MODEL_KEY", "model-key-for-argus".to_string()),
        ("ARGUS_TEST_UNLISTED", "not-for-argus".to_string()),
    ];
    let d = serve(&url, &home, &env);
    // The MCP handshake with the real server succeeded: running, until a wake is not taken.
    d.wait_health(|h| h["remote"]["state"] == "discovered" && h["argus"] == "running");
    // The orchestration skill is where the real runtime reads skills, and it lists it.
    let skills = real_skills(&argus_home);
    assert!(
        skills.contains("argus-runtime-orchestration/SKILL"),
        "the real runtime lists: {skills}"
    );
    let skill = argus_home.join("skills/argus-runtime-orchestration/SKILL.md");
    let installed = std::fs::metadata(&skill)
        .and_then(|m| m.modified())
        .expect("installed");
    d.observe_and_claim("a1", "train");
    assert_eq!(
        d.act("a1", "submit", json!({"message": "attempt 1"})).0,
        200
    );
    d.wait_state("a1", "remote_terminal_local_pending");
    // The attempt's completion woke Argus: the campaign is bound to the project the real
    // runtime created (its own id, `s-…`), and to no other.
    let mut project = None;
    wait_for("the campaign to be bound to a real project", || {
        project = bound_project(&d, "a1");
        project.is_some()
    });
    let project = project.unwrap_or_default();
    assert!(project.starts_with("s-"), "{project}");
    assert_eq!(real_projects(&argus_home), std::slice::from_ref(&project));
    // The real runtime answered the wake "[not dispatched]": degraded, said once in the feed.
    let h = d.wait_health(|h| {
        h["argus"]
            .as_str()
            .is_some_and(|s| s.starts_with("degraded (backend_unavailable) since"))
    });
    println!(
        "health with the real Argus and no backend: argus = {}",
        h["argus"]
    );
    wait_for("the notice", || degraded_notices(&d, "a1") == 1);
    // The campaign says what health says (not the project's last summary, "active").
    let view = d.get("/campaigns/a1").expect("view").1;
    let said = view["argus_status"].as_str().unwrap_or("");
    assert!(
        said.starts_with("degraded (backend_unavailable) since")
            && said.contains("decisions fall to the operator"),
        "{view}"
    );
    // Foreman's ESCALATE while Argus takes no wake reaches the operator as Needs you.
    assert_eq!(
        d.act("a1", "next-attempt", json!({"message": "attempt 2"}))
            .0,
        200
    );
    d.wait_state("a1", "remote_terminal_local_pending");
    wait_for("Foreman's escalation to reach a person", || {
        d.feed("a1")
            .iter()
            .any(|l| l.starts_with("Needs you: Foreman escalates") && l.contains("loss diverged"))
    });
    // What the real server was given: the allowlist, never a token of ours.
    let given = std::fs::read_to_string(&seen).expect("the recorded environment");
    let mut names: Vec<&str> = given
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k))
        .filter(|k| !matches!(*k, "PWD" | "SHLVL" | "_" | "OLDPWD"))
        .collect();
    names.sort_unstable();
    assert_eq!(names, crate::support::ARGUS_CHILD_ENV, "{given}");
    assert!(
        !given.contains(SIM_TOKEN) && !given.contains(API_TOKEN),
        "{given}"
    );
    assert!(
        given.contains("ARGUS_SKILL_RUNNER_BACKEND=codex"),
        "{given}"
    );
    assert!(
        given.contains(&format!("HOME={}", home.join("argus-user").display())),
        "{given}"
    );
    drop(d);

    // A kill between the project's creation and its binding being kept: the binding is gone;
    // the next wake finds the project again in the real list, never a second one.
    std::fs::remove_file(home.join("argus/a1.json")).expect("the binding's record");
    let d = serve(&url, &home, &env);
    d.wait_health(|h| h["remote"]["state"] == "discovered" && h["argus"] == "running");
    // Installed once: a restart leaves the skill as it was.
    assert_eq!(
        std::fs::metadata(&skill).and_then(|m| m.modified()).ok(),
        Some(installed)
    );
    let (s, b) = d.act("a1", "next-attempt", json!({"message": "attempt 3"}));
    assert_eq!(s, 200, "{b}");
    d.wait_state("a1", "remote_terminal_local_pending");
    wait_for("the campaign to be bound again", || {
        bound_project(&d, "a1").is_some()
    });
    assert_eq!(bound_project(&d, "a1"), Some(project.clone()));
    assert_eq!(real_projects(&argus_home), [project]);
    d.wait_health(|h| {
        h["argus"]
            .as_str()
            .is_some_and(|s| s.starts_with("degraded"))
    });
}

#[test]
fn a_token_of_ours_can_never_be_listed_for_argus() {
    let dir = tmp("argus-env");
    for name in ["OPENTRAINING_A2A_TOKEN", "ARGUS_SUPERVISOR_API_TOKEN"] {
        let out = crate::support::procs::serve_command(
            "http://127.0.0.1:9/",
            SIM_TOKEN,
            API_TOKEN,
            &dir.join("state"),
            crate::support::procs::free_port(),
        )
        .arg("--allow-insecure-loopback")
        .env(
            "ARGUS_SUPERVISOR_ARGUS_ENV",
            format!("ARGUS_TEST_MODEL_KEY, {name}"),
        )
        .output()
        .expect("serve");
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(
            said.contains("ARGUS_SUPERVISOR_ARGUS_ENV") && said.contains("never given to Argus"),
            "{said}"
        );
        assert!(
            !said.contains(SIM_TOKEN) && !said.contains(API_TOKEN),
            "{said}"
        );
    }
}

/// A SIGKILL between the real server's creating a campaign's project and the binding being
/// persisted: the disk refuses the binding from the moment the creation is answered (a pass-
/// through in front of the real server), and the daemon is killed there. Restarted, the next wake
/// finds the project again in the real list — one project for the campaign, never two.
#[test]
fn a_kill_between_creating_the_project_and_keeping_the_binding_never_makes_a_second() {
    let dir = tmp("real-argus-kill");
    let (_sim, url) = sim("happy", "127.0.0.1:0");
    let (home, argus_home) = (dir.join("state"), dir.join("argus-home"));
    let flag = dir.join("disk-refuses-writes");
    let proxy = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/interop/servers/fail_writes_after_create.py");
    let wrapper = dir.join("argus-plugin-server");
    executable(
        &wrapper,
        &format!(
            "exec {} {} {} {} \"$@\"",
            real_argus_server().with_file_name("python").display(),
            proxy.display(),
            flag.display(),
            real_argus_server().display()
        ),
    );
    let env = [
        ("ARGUS_SUPERVISOR_ARGUS_BIN", wrapper.display().to_string()),
        (
            "ARGUS_SUPERVISOR_ARGUS_HOME",
            argus_home.display().to_string(),
        ),
        (
            "ARGUS_SUPERVISOR_TEST_FAIL_WRITES_FLAG",
            flag.display().to_string(),
        ),
    ];
    let d = serve(&url, &home, &env);
    d.wait_health(|h| h["remote"]["state"] == "discovered" && h["argus"] == "running");
    d.observe_and_claim("k1", "train");
    assert_eq!(
        d.act("k1", "submit", json!({"message": "attempt 1"})).0,
        200
    );
    wait_for("the real server to create the project", || {
        flag.exists() && real_projects(&argus_home).len() == 1
    });
    let created = real_projects(&argus_home);
    // Killed (SIGKILL) with the binding refused by the disk: nothing of it was kept.
    drop(d);
    let kept = std::fs::read_to_string(home.join("argus/k1.json")).unwrap_or_default();
    assert!(!kept.contains(&created[0]), "the binding was kept: {kept}");
    std::fs::remove_file(&flag).expect("the disk takes writes again");
    let d = serve(&url, &home, &env);
    d.wait_health(|h| h["remote"]["state"] == "discovered" && h["argus"] == "running");
    d.wait_state("k1", "remote_terminal_local_pending");
    let (s, b) = d.act("k1", "next-attempt", json!({"message": "attempt 2"}));
    assert_eq!(s, 200, "{b}");
    wait_for("the campaign to be bound", || {
        bound_project(&d, "k1").is_some()
    });
    assert_eq!(
        bound_project(&d, "k1").as_deref(),
        Some(created[0].as_str())
    );
    assert_eq!(real_projects(&argus_home), created, "a second project");
}
