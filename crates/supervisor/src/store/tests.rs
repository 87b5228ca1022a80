use super::*;

fn tmp_store() -> Store {
    let dir = std::env::temp_dir().join(format!("argus-store-{}", uuid::Uuid::new_v4()));
    Store::open(dir).expect("open")
}

#[test]
fn a_current_document_is_read_straight_into_its_type_and_anything_else_the_general_way() {
    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Strict {
        a: u64,
        b: Vec<String>,
    }
    impl Document for Strict {}
    let v = STORE_SCHEMA_VERSION;
    let strict = Strict {
        a: 1,
        b: vec!["x\ny".into()],
    };
    for fast in [
        format!(r#"{{"schema_version": {v}, "a": 1, "b": ["x\ny"]}}"#),
        format!(r#"{{"a": 1, "schema_version": {v}, "b": ["x\ny"]}} "#),
    ] {
        assert_eq!(
            current::<Strict>(fast.as_bytes()),
            Some(strict_copy(&strict)),
            "{fast}"
        );
    }
    for general in [
        format!(r#"{{"schema_version": {}, "a": 1, "b": []}}"#, v - 1),
        format!(r#"{{"schema_version": {v}, "schema_version": {v}, "a": 1, "b": []}}"#),
        format!(r#"{{"schema_version": {v}, "a": 1, "b": [], "c": 2}}"#),
        format!(r#"{{"schema_version": "{v}", "a": 1, "b": []}}"#),
        r#"{"a": 1, "b": []}"#.to_string(),
        format!(r#"[{v}, 1, []]"#),
        format!(r#"{{"schema_version": {v}, "a": 1, "b": []}} trailing"#),
    ] {
        assert_eq!(current::<Strict>(general.as_bytes()), None, "{general}");
    }
    // As the general way reads it: the version is not one of the fields.
    let value = format!(r#"{{"schema_version": {v}, "a": {{"b": null}}}}"#);
    assert_eq!(
        current::<serde_json::Value>(value.as_bytes()),
        Some(serde_json::json!({"a": {"b": null}}))
    );
    fn strict_copy(s: &Strict) -> Strict {
        Strict {
            a: s.a,
            b: s.b.clone(),
        }
    }
}

#[test]
fn campaign_ids_cannot_traverse() {
    for bad in [
        "",
        "../x",
        "a/b",
        ".hidden",
        "a\\b",
        &"x".repeat(129),
        "spa ce",
        "nul\0",
    ] {
        assert!(validate_campaign_id(bad).is_err(), "{bad:?}");
    }
    for good in ["c1", "training-master_2026.11", &"x".repeat(128)] {
        assert!(validate_campaign_id(good).is_ok(), "{good:?}");
    }
}

#[test]
fn a_rewritten_document_swaps_two_inodes_and_its_scratch_holds_the_previous_version() {
    use std::os::unix::fs::MetadataExt;
    let s = tmp_store();
    let p = s.campaign_path(&CampaignId::parse("c1").expect("id"));
    let scratch = p.with_file_name(".c1.json.tmp");
    let mut inodes = std::collections::BTreeSet::new();
    for n in 0..6 {
        let durability = [Durability::Durable, Durability::Unsynced][n % 2];
        s.write_doc_with(&p, &serde_json::json!({ "n": n }), durability)
            .expect("write");
        let v: serde_json::Value = s.read_doc(&p).expect("read").expect("present");
        assert_eq!(v["n"], n, "every level writes the document");
        inodes.insert(fs::metadata(&p).expect("meta").ino());
        if n == 0 {
            assert!(!scratch.exists(), "a first write renames: no scratch yet");
        } else {
            let prev: serde_json::Value =
                serde_json::from_slice(&fs::read(&scratch).expect("scratch")).expect("json");
            assert_eq!(prev["n"], n - 1, "the scratch holds the previous version");
        }
    }
    assert_eq!(inodes.len(), 2, "exchanged, never a new inode: {inodes:?}");
    // The scratch is overwritten in place and cut to length: a short document written over a
    // long one's blocks carries nothing of it.
    let long = serde_json::json!({ "n": "x".repeat(10_000) });
    for doc in [
        &long,
        &serde_json::json!({ "n": 1 }),
        &serde_json::json!({ "n": 2 }),
    ] {
        s.write_doc(&p, doc).expect("write");
        let v: serde_json::Value = s.read_doc(&p).expect("read").expect("present");
        assert_eq!(v["n"], doc["n"]);
    }
    // Nothing lists the scratch as a campaign.
    let listed = s.campaign_files().expect("list");
    assert_eq!(listed.len(), 1, "{listed:?}");
}

#[test]
fn campaign_files_are_listed_in_the_order_of_their_names() {
    let s = tmp_store();
    for id in ["z", "m", "a.b", "m-1", "A", "a"] {
        let p = s.campaign_path(&CampaignId::parse(id).expect("id"));
        s.write_doc(&p, &serde_json::json!({ "id": id }))
            .expect("write");
    }
    let names: Vec<String> = s
        .campaign_files()
        .expect("list")
        .iter()
        .map(|p| p.file_name().expect("name").to_string_lossy().into_owned())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    assert_eq!(names.first().map(String::as_str), Some("A.json"));
    assert_eq!(names.len(), 6);
}

#[test]
fn atomic_save_reload_and_corruption_moved_aside() {
    let s = tmp_store();
    let p = s.campaign_path(&CampaignId::parse("c1").expect("id"));
    s.write_doc(&p, &serde_json::json!({"a": 1}))
        .expect("write");
    let v: serde_json::Value = s.read_doc(&p).expect("read").expect("present");
    assert_eq!(v["a"], 1);
    assert!(
        !p.with_file_name(".c1.json.tmp").exists(),
        "no temp file left behind"
    );
    // Truncated on disk.
    std::fs::write(&p, b"{\"schema_version\": 1, \"a\"").expect("truncate");
    match s.read_doc::<serde_json::Value>(&p) {
        Err(StoreError::Corrupt { moved_to, .. }) => {
            assert!(moved_to.exists(), "kept, not deleted");
            assert!(!p.exists());
        }
        other => panic!("{other:?}"),
    }
    // Unknown version.
    std::fs::write(&p, b"{\"schema_version\": 99, \"a\": 1}").expect("write");
    assert!(matches!(
        s.read_doc::<serde_json::Value>(&p),
        Err(StoreError::Corrupt { .. })
    ));
    assert_eq!(
        s.read_doc::<serde_json::Value>(&p).expect("absent now"),
        None
    );
}

#[test]
fn a_torn_tail_is_repaired_before_the_next_append_and_kept_aside() {
    let s = tmp_store();
    let p = s.events_path(&CampaignId::parse("c1").expect("id"));
    s.append_line(&p, &serde_json::json!({"n": 1}))
        .expect("append");
    let mut f = OpenOptions::new().append(true).open(&p).expect("open");
    f.write_all(b"{\"n\": 2, \"tor").expect("torn");
    drop(f);
    s.append_line(&p, &serde_json::json!({"n": 3}))
        .expect("append");
    let (lines, bad): (Vec<serde_json::Value>, usize) = s.read_lines(&p).expect("read");
    assert_eq!(
        lines,
        [serde_json::json!({"n": 1}), serde_json::json!({"n": 3})]
    );
    assert_eq!(bad, 0, "the next event was not lost with the torn line");
    let kept: Vec<_> = fs::read_dir(s.root().join("quarantine"))
        .expect("dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".torn"))
        .collect();
    assert_eq!(kept.len(), 1, "the fragment is kept, not deleted");
}

#[test]
fn invalid_utf8_in_a_log_skips_that_line_only() {
    let s = tmp_store();
    let p = s.events_path(&CampaignId::parse("c1").expect("id"));
    s.append_line(&p, &serde_json::json!({"n": 1}))
        .expect("append");
    let mut f = OpenOptions::new().append(true).open(&p).expect("open");
    f.write_all(b"\xff\xfe\n").expect("garbage");
    drop(f);
    s.append_line(&p, &serde_json::json!({"n": 2}))
        .expect("append");
    let (lines, bad): (Vec<serde_json::Value>, usize) = s.read_lines(&p).expect("read");
    assert_eq!(lines.len(), 2);
    assert_eq!(bad, 1);
}

#[test]
fn the_state_root_is_held_by_one_process_and_names_its_pid() {
    let s = tmp_store();
    let held = s.lock().expect("first lock");
    match s.lock() {
        Err(LockError::Held { pid, .. }) => {
            assert_eq!(pid, std::process::id().to_string())
        }
        other => panic!("{other:?}"),
    }
    drop(held);
    s.lock().expect("free again once dropped");
}

#[test]
fn event_lines_append_and_a_torn_tail_is_skipped() {
    let s = tmp_store();
    let p = s.events_path(&CampaignId::parse("c1").expect("id"));
    s.append_line(&p, &serde_json::json!({"n": 1}))
        .expect("append");
    s.append_line(&p, &serde_json::json!({"n": 2}))
        .expect("append");
    let mut f = OpenOptions::new().append(true).open(&p).expect("open");
    f.write_all(b"{\"n\": 3").expect("torn");
    let (lines, bad): (Vec<serde_json::Value>, usize) = s.read_lines(&p).expect("read");
    assert_eq!(lines.len(), 2);
    assert_eq!(bad, 1);
}
