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

/// The campaigns' logs (events and feeds) as they are on disk now.
fn logs(home: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for dir in ["events", "messages"] {
        for e in std::fs::read_dir(home.join(dir))
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = format!("{dir}/{}", e.file_name().to_string_lossy());
            out.insert(name, std::fs::read(e.path()).unwrap_or_default());
        }
    }
    out
}

fn run(args: &[&str], home: &Path) -> (Option<i32>, String) {
    let out = Command::new(BIN)
        .args(args)
        .arg("--home")
        .arg(home)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("ARGUS_SUPERVISOR_API_TOKEN", API_TOKEN)
        .output()
        .expect("run");
    (
        out.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn a_backup_taken_under_load_restores_the_same_campaigns_and_feeds_and_no_second_task() {
    let dir = tmp("backup");
    let home = dir.join("state");
    let (_sim, url) = sim("long-noisy", "127.0.0.1:0");
    let d = serve(&url, &home, &[]);
    d.wait_health(|h| h["status"] == "ok");
    let ids: Vec<String> = (0..6).map(|i| format!("b{i}")).collect();
    for id in &ids {
        assert_eq!(
            d.act(
                id,
                "observe",
                json!({"objective": format!("objective of {id}")})
            )
            .0,
            200
        );
        assert_eq!(d.act(id, "claim", json!({})).0, 200);
        assert_eq!(
            d.act(id, "submit", json!({"message": format!("attempt of {id}")}))
                .0,
            200
        );
    }
    // Under load: every campaign's noisy attempt is being followed when the snapshot is taken.
    super::serve_loop::wait_for("every campaign's feed to grow", || {
        let l = logs(&home);
        ids.iter().all(|id| {
            l.get(&format!("messages/{id}.jsonl"))
                .is_some_and(|b| b.iter().filter(|c| **c == b'\n').count() >= 2)
        })
    });
    let before = logs(&home);
    let (code, said) = run(
        &["backup", "--url", &format!("http://127.0.0.1:{}", d.port)],
        &home,
    );
    assert_eq!(code, Some(0), "{said}");
    let archive = PathBuf::from(
        said.trim()
            .rsplit(" in ")
            .next()
            .expect("the archive's path"),
    );
    assert!(archive.starts_with(home.join("backups")), "{said}");
    let after = logs(&home);
    // A daemon runs on the root: restoring over it is refused, nothing changed.
    let (code, said) = run(
        &[
            "restore",
            "--replace",
            "--from",
            &archive.display().to_string(),
        ],
        &home,
    );
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("a daemon holds"), "{said}");
    assert!(d.terminate().success());
    // No secret in the archive.
    let bytes = std::fs::read(&archive).expect("archive");
    for secret in [API_TOKEN, SIM_TOKEN] {
        assert!(!bytes.windows(secret.len()).any(|w| w == secret.as_bytes()));
    }

    // Restored elsewhere: every log is the one of the snapshot's instant — at least what it was
    // before the backup began, at most what it was after, and a prefix of it (never a torn line).
    let restored = dir.join("restored");
    let (code, said) = run(
        &["restore", "--from", &archive.display().to_string()],
        &restored,
    );
    assert_eq!(code, Some(0), "{said}");
    assert!(said.starts_with("restore: done;"), "{said}");
    let got = logs(&restored);
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    for (name, bytes) in &got {
        assert!(
            after[name].starts_with(bytes),
            "{name} is not a prefix of the live log"
        );
        assert!(
            bytes.len() >= before.get(name).map_or(0, Vec::len),
            "{name} lost lines"
        );
        assert!(
            bytes.is_empty() || bytes.ends_with(b"\n"),
            "{name} ends in a torn line"
        );
    }
    // The restored root recovers the same campaigns, nothing set aside, and its leases are
    // confirmed with the remote, never re-sent: still one task per campaign at the remote.
    let r = serve(&url, &restored, &[]);
    r.wait_health(|h| h["status"] == "ok");
    for id in &ids {
        let (_, v) = r.get(&format!("/campaigns/{id}")).expect("view");
        assert_eq!(v["objective"], format!("objective of {id}"), "{v}");
    }
    super::serve_loop::wait_for("every lease confirmed", || {
        ids.iter().all(|id| {
            r.get(&format!("/campaigns/{id}")).is_some_and(|(_, v)| {
                v["state"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("controlling."))
            })
        })
    });
    assert_eq!(
        std::fs::read_dir(restored.join("quarantine"))
            .map(|d| d.count())
            .unwrap_or(0),
        0
    );
    let audit = super::serve_loop::audit(&url);
    for id in &ids {
        assert_eq!(
            audit["counters"]["tasks_per_campaign"][id.as_str()],
            1,
            "{id}"
        );
    }
    assert!(r.terminate().success());

    // A damaged archive is refused, and nothing is made.
    let damaged = dir.join("damaged.tar");
    let mut bytes = std::fs::read(&archive).expect("archive");
    let at = bytes
        .windows(b"objective of b0".len())
        .position(|w| w == b"objective of b0")
        .expect("a document in the archive");
    bytes[at] = b'O';
    std::fs::write(&damaged, &bytes).expect("write");
    let target = dir.join("from-damaged");
    let (code, said) = run(
        &["restore", "--from", &damaged.display().to_string()],
        &target,
    );
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("the archive is damaged") && said.contains("does not match the manifest"),
        "{said}"
    );
    assert!(
        !target.exists()
            || std::fs::read_dir(&target)
                .map(|mut d| d.next().is_none())
                .unwrap_or(true)
    );

    // An archive a newer build wrote is refused, naming it.
    let unpacked = dir.join("unpacked");
    std::fs::create_dir_all(&unpacked).expect("dir");
    assert!(Command::new("tar")
        .arg("-xf")
        .arg(&archive)
        .arg("-C")
        .arg(&unpacked)
        .status()
        .expect("tar")
        .success());
    let manifest = unpacked.join("MANIFEST.json");
    set_schema(&manifest, 3);
    let newer = dir.join("newer.tar");
    let mut names: Vec<String> = std::fs::read_to_string(&manifest)
        .ok()
        .and_then(|m| serde_json::from_str::<Value>(&m).ok())
        .and_then(|m| m["files"].as_array().cloned())
        .into_iter()
        .flatten()
        .filter_map(|f| f["path"].as_str().map(String::from))
        .collect();
    names.push("MANIFEST.json".into());
    assert!(Command::new("tar")
        .arg("-cf")
        .arg(&newer)
        .arg("-C")
        .arg(&unpacked)
        .args(&names)
        .status()
        .expect("tar")
        .success());
    let (code, said) = run(
        &["restore", "--from", &newer.display().to_string()],
        &dir.join("from-newer"),
    );
    assert_eq!(code, Some(6), "{said}");
    assert!(
        said.contains("written by a newer build (store schema 3"),
        "{said}"
    );
}

/// `campaigns …` through the CLI against the daemon at `port`.
fn cli(port: u16, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(BIN)
        .arg("campaigns")
        .args(["--url", &format!("http://127.0.0.1:{port}")])
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("ARGUS_SUPERVISOR_API_TOKEN", API_TOKEN)
        .output()
        .expect("campaigns");
    (
        out.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn live_ids(d: &super::serve_loop::Daemon) -> Vec<String> {
    d.get("/campaigns").expect("campaigns").1["campaigns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["campaign_id"].as_str().map(String::from))
        .collect()
}

#[test]
fn closed_campaigns_leave_the_live_set_stay_readable_export_whole_and_age_out_by_retention() {
    let dir = tmp("retention");
    let home = dir.join("state");
    let (_sim, url) = sim("happy", "127.0.0.1:0");
    let d = serve(&url, &home, &[]);
    d.wait_health(|h| h["status"] == "ok");
    let close = |id: &str| {
        assert_eq!(
            d.act(id, "observe", json!({"objective": format!("goal {id}")}))
                .0,
            200
        );
        assert_eq!(d.act(id, "claim", json!({})).0, 200);
        assert_eq!(d.act(id, "submit", json!({"message": "go"})).0, 200);
        super::serve_loop::wait_for("the attempt's end", || {
            d.get(&format!("/campaigns/{id}"))
                .is_some_and(|(_, v)| v["state"] == "remote_terminal_local_pending")
        });
        assert_eq!(d.act(id, "accept", json!({"reason": "done"})).0, 200);
    };
    close("c1");
    close("c3");
    assert_eq!(
        d.act("c2", "observe", json!({"objective": "still live"})).0,
        200
    );
    // A live campaign is not archived: refused, said why, nothing moved.
    let (code, said) = cli(d.port, &["archive", "c2"]);
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains("not_closed") || said.contains("only a closed campaign"),
        "{said}"
    );
    assert!(home.join("campaigns/c2.json").exists());
    // A closed one leaves the live set, kept in the state root.
    let (code, said) = cli(d.port, &["archive", "c1"]);
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.starts_with("archive: done; c1 left the live set"),
        "{said}"
    );
    assert_eq!(live_ids(&d), ["c2", "c3"]);
    assert!(!home.join("campaigns/c1.json").exists());
    assert!(home.join("archive/c1/campaign.json").exists());
    let (code, said) = cli(d.port, &["list", "--archived"]);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("c1  closed.accepted  goal c1"), "{said}");
    // Exported whole: its document, its events and its feed, in one JSON document.
    let (code, said) = cli(d.port, &["export", "c1"]);
    assert_eq!(code, Some(0), "{said}");
    let export: Value = serde_json::from_str(&said).expect("export JSON");
    assert_eq!(export["archived"], true);
    assert_eq!(export["campaign"]["objective"], "goal c1");
    assert!(!export["events"].as_array().expect("events").is_empty());
    assert!(
        export["feed"]
            .as_array()
            .expect("feed")
            .iter()
            .any(|m| m["kind"] == "MISSION_COMPLETE"),
        "{export}"
    );
    assert!(d.terminate().success());

    // Retention: c3 closed forty days ago leaves the live set at the next start; c1 stays out,
    // c2 (live) stays in.
    let c3 = home.join("campaigns/c3.json");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&c3).expect("c3")).expect("json");
    let now = doc["updated_at"].as_u64().expect("updated_at");
    doc["updated_at"] = json!(now - 40 * 86_400);
    std::fs::write(&c3, doc.to_string()).expect("age c3");
    // Its file as old as it says (retention reads only the files unchanged for that long).
    assert!(Command::new("touch")
        .args(["-d", "40 days ago"])
        .arg(&c3)
        .status()
        .expect("touch")
        .success());
    let d = serve(
        &url,
        &home,
        &[("ARGUS_SUPERVISOR_ARCHIVE_AFTER_DAYS", "30".into())],
    );
    d.wait_health(|h| h["status"] == "ok");
    super::serve_loop::wait_for("retention to archive c3", || live_ids(&d) == ["c2"]);
    let archived = d.get("/archive").expect("archive").1;
    let ids: Vec<&str> = archived["archived"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["campaign_id"].as_str())
        .collect();
    assert_eq!(ids, ["c1", "c3"], "{archived}");
    assert!(d.terminate().success());
}

/// A tmpfs of `mib` MiB mounted at `at` for the test's life (root only: CI runs as root).
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(at: &Path, mib: u32) -> SmallDisk {
        std::fs::create_dir_all(at).expect("mount point");
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "tmpfs"])
            .arg(at)
            .status()
            .expect("mount");
        assert!(
            ok.success(),
            "this test mounts a small tmpfs: it needs root (CI runs as root)"
        );
        SmallDisk(at.to_path_buf())
    }

    /// Fill it to the last byte: the filler's path.
    fn fill(&self) -> PathBuf {
        use std::io::Write;
        let path = self.0.join("filler");
        let mut f = std::fs::File::create(&path).expect("filler");
        let chunk = vec![0u8; 4096];
        while f.write_all(&chunk).is_ok() {}
        let _ = f.flush();
        path
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn reasons(d: &super::serve_loop::Daemon) -> Vec<String> {
    d.get("/health")
        .map(|(_, h)| h["reasons"].clone())
        .unwrap_or(Value::Null)
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["class"].as_str().map(String::from))
        .collect()
}

#[test]
fn a_real_full_disk_loses_nothing_sends_no_unrecorded_write_is_said_and_resumes_by_itself() {
    let dir = tmp("full-disk");
    let disk = SmallDisk::mount(&dir.join("fs"), 4);
    let home = dir.join("fs/state");
    let (_sim, url) = sim("long-noisy", "127.0.0.1:0");
    let d = serve(&url, &home, &[]);
    d.wait_health(|h| h["status"] == "ok");
    assert_eq!(
        d.act("f1", "observe", json!({"objective": "runs through it"}))
            .0,
        200
    );
    assert_eq!(d.act("f1", "claim", json!({})).0, 200);
    assert_eq!(
        d.act("f1", "submit", json!({"message": "attempt 1"})).0,
        200
    );
    assert_eq!(d.act("f2", "observe", json!({"objective": "waits"})).0, 200);
    assert_eq!(d.act("f2", "claim", json!({})).0, 200);
    let filler = disk.fill();
    super::serve_loop::wait_for("health to say the disk refuses writes", || {
        reasons(&d).contains(&"store_unwritable".to_string())
    });
    // A new campaign cannot be recorded: refused here, and nothing reaches the remote for it.
    let (s3, b3) = d.act("f3", "observe", json!({"objective": "no room"}));
    assert_eq!((s3, &b3["code"]), (503, &json!("storage_failed")), "{b3}");
    assert_eq!(b3["refused_by"], "supervisor");
    assert!(d.get("/campaigns/f3").is_some_and(|(s, _)| s == 404));
    // A write on a recorded campaign goes out only if its intent was recorded first (its
    // document's scratch is allocated already, so it may be): sent exactly when done.
    let (s, b) = d.act("f2", "submit", json!({"message": "attempt 1"}));
    let sends = |id: &str| {
        super::serve_loop::audit(&url)["entries"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["method"] == "message/send" && e["campaign_id"] == id)
            .count()
    };
    assert_eq!(sends("f2"), usize::from(s == 200), "{b}");
    // Space returns: everything resumes by itself.
    std::fs::remove_file(&filler).expect("free");
    super::serve_loop::wait_for("health to be ready again", || reasons(&d).is_empty());
    if sends("f2") == 0 {
        let (s, b) = d.act("f2", "submit", json!({"message": "attempt 1"}));
        assert_eq!(s, 200, "{b}");
    }
    assert_eq!(sends("f2"), 1);
    let feed_len = |id: &str| {
        d.get(&format!("/campaigns/{id}/messages"))
            .map(|(_, v)| v["messages"].as_array().map_or(0, Vec::len))
            .unwrap_or(0)
    };
    let now = feed_len("f1");
    super::serve_loop::wait_for("f1's feed to grow again", || feed_len("f1") > now);
    // Said once, when it was over (the disk had no room for it before): in the feed the plugin
    // notifies from.
    super::serve_loop::wait_for("the full disk told in the feed", || {
        d.get("/remote/messages").is_some_and(|(_, v)| {
            v["messages"].as_array().is_some_and(|m| {
                m.iter().any(|l| {
                    l["text"]
                        .as_str()
                        .is_some_and(|t| t.starts_with("The state root refused writes"))
                })
            })
        })
    });
    let told = d.get("/remote/messages").expect("feed").1["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|l| {
            l["kind"] == "CRITICAL_FAILURE"
                && l["text"]
                    .as_str()
                    .is_some_and(|t| t.starts_with("The state root refused writes"))
        })
        .count();
    assert_eq!(told, 1);
    assert!(d.terminate().success());
    // Nothing torn, nothing lost: every document and every log line reads.
    for sub in ["campaigns", "leases"] {
        // Hidden files are the store's scratch (a document's previous version, or a write that
        // did not complete): nothing reads them, the next write overwrites them.
        for e in std::fs::read_dir(home.join(sub))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        {
            let bytes = std::fs::read(e.path()).expect("doc");
            assert!(
                serde_json::from_slice::<Value>(&bytes).is_ok(),
                "{:?} torn",
                e.path()
            );
        }
    }
    for (name, bytes) in logs(&home) {
        assert!(
            bytes.is_empty() || bytes.ends_with(b"\n"),
            "{name} ends torn"
        );
        for line in bytes.split(|c| *c == b'\n').filter(|l| !l.is_empty()) {
            assert!(
                serde_json::from_slice::<Value>(line).is_ok(),
                "{name}: a torn line"
            );
        }
    }
    let audit = super::serve_loop::audit(&url);
    assert_eq!(audit["counters"]["tasks_per_campaign"]["f1"], 1);
    assert_eq!(audit["counters"]["tasks_per_campaign"]["f2"], 1);
    drop(disk);
}
