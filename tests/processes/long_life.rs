//! Issue 59: a long life without loss. A state root a newer build wrote is refused by this one,
//! untouched (a rollback used to quarantine every newer document and bring the campaigns back
//! blank); the refusal names both versions and the way back. Judged from outside: the exit code,
//! what it said, and every byte of the state root.

use super::serve_loop::{serve, sim, tmp, API_TOKEN, SIM_TOKEN};
use crate::support::procs::{self, free_port, BIN};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Every file under `root` and its bytes (directories too, as empty entries).
fn tree(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap_or(&p).to_path_buf();
            if p.is_dir() {
                out.insert(rel, vec![]);
                todo.push(p);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

/// `serve` on `home` expected to stop by itself: its exit code and what it said.
fn serve_refused(url: &str, home: &Path) -> (Option<i32>, String) {
    let mut child = procs::serve_command(url, SIM_TOKEN, API_TOKEN, home, free_port())
        .arg("--allow-insecure-loopback")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("serve kept running on a newer root");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut said = String::new();
    use std::io::Read;
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut said);
    }
    (status.code(), said)
}

fn set_schema(path: &Path, version: u64) {
    let mut doc: Value = serde_json::from_slice(&std::fs::read(path).expect("read")).expect("json");
    doc["schema_version"] = json!(version);
    std::fs::write(path, serde_json::to_vec(&doc).expect("json")).expect("write");
}

#[test]
fn a_root_a_newer_build_wrote_is_refused_untouched_naming_both_versions() {
    let dir = tmp("newer-root");
    let home = dir.join("state");
    let (_sim, url) = sim("happy", "127.0.0.1:0");
    // A root this build wrote: one campaign, and the root's mark.
    let d = serve(&url, &home, &[]);
    d.wait_health(|h| h["status"] == "ok");
    assert_eq!(
        d.act("c1", "observe", json!({"objective": "keep me"})).0,
        200
    );
    let mark: Value = serde_json::from_slice(
        &std::fs::read(home.join("store-version.json")).expect("the root's mark"),
    )
    .expect("mark");
    assert_eq!(mark["schema_version"], 2, "{mark}");
    assert!(
        mark["written_by"]
            .as_str()
            .is_some_and(|b| b.starts_with("argus-supervisor ")),
        "{mark}"
    );
    assert!(d.terminate().success());

    // One campaign document a newer build wrote.
    let doc = home.join("campaigns/c1.json");
    let as_written = std::fs::read(&doc).expect("doc");
    set_schema(&doc, 3);
    let before = tree(&home);
    let (code, said) = serve_refused(&url, &home);
    assert_eq!(code, Some(6), "{said}");
    for words in [
        "campaigns/c1.json is store schema 3",
        "this build reads store schema 2 and older",
        "Nothing was touched",
        "Run the newer build again",
        "restore the backup taken before the upgrade",
    ] {
        assert!(said.contains(words), "{words:?} not in {said}");
    }
    assert_eq!(tree(&home), before, "the state root changed");

    // The root's mark says a newer build ran here: refused too, naming that build.
    std::fs::write(&doc, &as_written).expect("restore");
    std::fs::write(
        home.join("store-version.json"),
        json!({"schema_version": 3, "written_by": "argus-supervisor 0.3.0 (commit f0f0f0f0f0f0)"})
            .to_string(),
    )
    .expect("mark");
    let before = tree(&home);
    let (code, said) = serve_refused(&url, &home);
    assert_eq!(code, Some(6), "{said}");
    assert!(
        said.contains("store-version.json is store schema 3 (by argus-supervisor 0.3.0 (commit f0f0f0f0f0f0))"),
        "{said}"
    );
    assert_eq!(tree(&home), before, "the state root changed");

    // Back on a root this build can read: the campaign is whole (not blank, nothing set aside).
    std::fs::write(
        home.join("store-version.json"),
        serde_json::to_vec(&mark).expect("json"),
    )
    .expect("mark");
    let d = serve(&url, &home, &[]);
    d.wait_health(|h| h["status"] == "ok");
    let (_, v) = d.get("/campaigns/c1").expect("view");
    assert_eq!(v["objective"], "keep me", "{v}");
    let quarantined = std::fs::read_dir(home.join("quarantine"))
        .map(|r| r.count())
        .unwrap_or(0);
    assert_eq!(quarantined, 0);
    assert!(d.terminate().success());
}

/// The copies an upgrade kept are the documents as the older build wrote them, until the operator
/// confirms (`confirm-upgrade`).
pub(crate) fn kept_copies_match_and_confirm_removes_them(home: &Path, fixture: &Path) {
    let kept: Vec<PathBuf> = std::fs::read_dir(home.join("upgrade-backup"))
        .expect("an upgrade copy")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(
        kept[0]
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("schema-1-at-")),
        "{kept:?}"
    );
    for doc in ["campaigns/c1.json", "argus/c1.json"] {
        assert_eq!(
            std::fs::read(kept[0].join(doc)).expect("kept"),
            std::fs::read(fixture.join(doc)).expect("fixture"),
            "{doc}"
        );
    }
    let out = Command::new(BIN)
        .args(["confirm-upgrade", "--home"])
        .arg(home)
        .output()
        .expect("confirm-upgrade");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("1 kept upgrade copy(ies) removed"), "{said}");
    assert!(!kept[0].exists());
}
