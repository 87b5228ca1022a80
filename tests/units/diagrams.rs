//! The generated diagrams: complete, marked, reproducible, and `--check` catches drift.

use argus_machines::StateName;
use argus_supervisor_lib::diagrams::{check, generate, write, DiagramError, Generated};

/// The content of the generated file `name`.
fn file<'a>(files: &'a [Generated], name: &str) -> &'a str {
    &files
        .iter()
        .find(|g| g.name == name)
        .unwrap_or_else(|| panic!("{name} is generated"))
        .content
}

#[test]
fn mermaid_shows_every_state_with_controlling_composite() {
    let files = generate().expect("generate");
    let mmd = file(&files, "campaign.mmd");
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
    let dot = file(&files, "campaign.dot");
    assert!(dot.contains("subgraph cluster_Controlling"));
    assert!(
        dot.contains("color=\"red\""),
        "write edges are drawn distinctly"
    );
    let svg = file(&files, "campaign.svg");
    assert!(svg.contains("<svg") && svg.contains("AmbiguousWrite"));
    // The panel's pictures: each view's nodes are titled with the names the API gives
    // (`diagram_state`, `diagram_superstate`), so the panel can find the current one.
    let overview = file(&files, "overview.svg");
    assert!(
        overview.contains("<title>Controlling</title>")
            && !overview.contains("<title>Running</title>")
    );
    let controlling = file(&files, "controlling.svg");
    assert!(
        controlling.contains("<title>Running</title>")
            && controlling.contains("<title>AwaitingInput</title>")
    );
}

#[test]
fn generation_is_deterministic_and_check_names_the_stale_file() {
    let dir = std::env::temp_dir().join(format!("argus-diagrams-{}", std::process::id()));
    write(&dir).expect("write");
    // 11 Markdown, Mermaid and DOT files and the complete SVG, plus the panel's 5 view SVGs.
    assert_eq!(check(&dir).expect("fresh files pass"), 16);
    std::fs::write(dir.join("campaign.dot"), "digraph {}").expect("tamper");
    match check(&dir) {
        Err(DiagramError::Stale(path)) => assert!(path.ends_with("campaign.dot")),
        other => panic!("{other:?}"),
    }
    std::fs::remove_dir_all(&dir).ok();
}

// ----- Issue 19: readable by construction -------------------------------------------------------

use argus_machines::views::{self, Concern, MAX_DETAIL_EDGES, MAX_LABEL, MAX_OVERVIEW_EDGES};

#[test]
fn every_view_is_small_enough_to_read_and_every_transition_has_one_home() {
    let x = argus_machines::explore::explore();
    let overview = views::overview(&x.graph, &[]);
    println!(
        "overview: {} edges, longest label {}",
        overview.edges.len(),
        overview.longest_label()
    );
    assert!(
        overview.edges.len() <= MAX_OVERVIEW_EDGES,
        "{}",
        overview.mermaid
    );
    assert!(overview.longest_label() <= MAX_LABEL);
    assert!(
        overview
            .edges
            .iter()
            .any(|e| e.from == "AnyOpen" && e.label.starts_with("abandon")),
        "abandon is drawn once, from any open state"
    );
    for c in Concern::ALL {
        let v = views::detail(&x.graph, c, &[]);
        println!(
            "{}: {} edges, longest label {}",
            v.file,
            v.edges.len(),
            v.longest_label()
        );
        assert!(v.edges.len() <= MAX_DETAIL_EDGES, "{}", v.mermaid);
        assert!(v.longest_label() <= MAX_LABEL, "{}", v.mermaid);
    }
    let a = views::authority(&x.graph);
    println!(
        "{}: {} edges, longest label {}",
        a.file,
        a.edges.len(),
        a.longest_label()
    );
    assert!(
        a.edges.iter().all(|e| e.writes),
        "the authority view draws only writes"
    );
    // Every write starts in a lease-holding state (or on the grant that enters one).
    for e in x.graph.edges.iter().filter(|e| e.writes) {
        assert!(
            e.from.is_controlling() || e.to.is_controlling(),
            "{:?} --{}--> {:?} writes outside Controlling",
            e.from,
            e.event,
            e.to
        );
    }
    assert_eq!(
        views::coverage(&x.graph).expect("coverage"),
        x.graph.edges.len()
    );
}

#[test]
fn every_mermaid_file_renders_in_the_real_mermaid_renderer() {
    let mmdc = std::env::var("ARGUS_MERMAID_CLI")
        .expect("ARGUS_MERMAID_CLI is not set: run scripts/test.sh (it installs @mermaid-js/mermaid-cli and Chromium)");
    let config =
        std::env::var("ARGUS_MERMAID_PUPPETEER").expect("ARGUS_MERMAID_PUPPETEER is not set");
    let out = std::env::temp_dir().join(format!("argus-mermaid-{}", std::process::id()));
    std::fs::create_dir_all(&out).expect("dir");
    let files = generate().expect("generate");
    let mut rendered = 0;
    for g in files.iter().filter(|g| g.name.ends_with(".mmd")) {
        let input = out.join(g.name);
        std::fs::write(&input, &g.content).expect("write");
        let svg = out.join(format!("{}.svg", g.name));
        let status = std::process::Command::new(&mmdc)
            .arg("-p")
            .arg(&config)
            .arg("-i")
            .arg(&input)
            .arg("-o")
            .arg(&svg)
            .arg("-q")
            .status()
            .expect("run mmdc");
        assert!(status.success(), "{} does not render", g.name);
        let text = std::fs::read_to_string(&svg).expect("svg");
        assert!(text.contains("<svg"), "{}", g.name);
        assert!(
            !text.contains("Syntax error"),
            "{} renders a syntax error",
            g.name
        );
        rendered += 1;
    }
    assert_eq!(rendered, 7, "campaign.mmd and the six views");
}
