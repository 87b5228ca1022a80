//! The generated diagrams: complete, marked, reproducible, and `--check` catches drift.

use argus_machines::StateName;
use argus_supervisor::diagrams::{check, generate, write, DiagramError};

#[test]
fn mermaid_shows_every_state_with_controlling_composite() {
    let files = generate().expect("generate");
    let mmd = &files
        .iter()
        .find(|g| g.name == "campaign.mmd")
        .expect("mmd")
        .content;
    assert!(mmd.starts_with("%% Generated"));
    assert!(mmd.contains("stateDiagram-v2"));
    for composite in ["state Observing {", "state Controlling {", "state Closed {"] {
        assert!(mmd.contains(composite), "{composite}");
    }
    for s in StateName::ALL {
        assert!(
            mmd.contains(&format!("\n        {}\n", s.name()))
                || mmd.contains(&format!("\n    {}\n", s.name())),
            "{s:?}"
        );
    }
    assert!(mmd.contains("Ready --> Submitting : op_submit, / WRITE Submit"));
    let dot = &files
        .iter()
        .find(|g| g.name == "campaign.dot")
        .expect("dot")
        .content;
    assert!(dot.contains("subgraph cluster_Controlling"));
    assert!(
        dot.contains("color=\"red\""),
        "write edges are drawn distinctly"
    );
    let svg = &files
        .iter()
        .find(|g| g.name == "campaign.svg")
        .expect("svg")
        .content;
    assert!(svg.contains("<svg") && svg.contains("AmbiguousWrite"));
}

#[test]
fn generation_is_deterministic_and_check_names_the_stale_file() {
    let dir = std::env::temp_dir().join(format!("argus-diagrams-{}", std::process::id()));
    write(&dir).expect("write");
    assert_eq!(check(&dir).expect("fresh files pass"), 4);
    std::fs::write(dir.join("campaign.dot"), "digraph {}").expect("tamper");
    match check(&dir) {
        Err(DiagramError::Stale(path)) => assert!(path.ends_with("campaign.dot")),
        other => panic!("{other:?}"),
    }
    std::fs::remove_dir_all(&dir).ok();
}
