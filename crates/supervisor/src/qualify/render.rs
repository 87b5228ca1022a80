//! The report as Markdown, in the spec's §25 order. Evidence holds ids, epochs, codes and timings
//! only (never remote text, never a secret), but a pipe or a newline would still break a table row,
//! so cells are escaped.

use super::{Grade, Report, Section};

fn cell(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

pub(super) fn markdown(r: &Report) -> String {
    let mut out = String::new();
    let verdict = r.standing.says();
    out.push_str("# Qualification report\n\n");
    out.push_str(&format!("**Verdict: {verdict}** — {}\n\n", cell(&r.reason)));
    out.push_str("| | |\n|---|---|\n");
    let rows: [(&str, String); 9] = [
        ("Endpoint", r.endpoint.clone()),
        (
            "Agent card",
            match (&r.card_sha256, r.card_path) {
                (Some(h), Some(p)) => format!("{p}, sha256 `{h}`"),
                _ => "not read".into(),
            },
        ),
        ("Auth mode", r.auth_mode.clone()),
        (
            "Controller id",
            r.controller_id
                .clone()
                .unwrap_or_else(|| "none (nothing claimed)".into()),
        ),
        (
            "Test campaign",
            r.write_campaign
                .clone()
                .unwrap_or_else(|| "none (no --write-campaign)".into()),
        ),
        (
            "Can (by the card)",
            if r.can.is_empty() {
                "nothing".into()
            } else {
                r.can.join(", ")
            },
        ),
        ("Started", r.started_at.clone()),
        ("Finished", r.finished_at.clone()),
        ("Tool", r.tool.clone()),
    ];
    for (k, v) in rows {
        out.push_str(&format!("| {k} | {} |\n", cell(&v)));
    }
    out.push_str(&operations(r));
    out.push_str(&sections(r));
    out.push_str(&deployment(&r.deployment));
    match &r.record {
        Some(p) => out.push_str(&format!("\nRecord kept: `{}`\n", p.display())),
        None => out.push_str("\nNo record kept.\n"),
    }
    out
}

/// The operations the card offers, each with what is known of it.
fn operations(r: &Report) -> String {
    let mut out = String::new();
    if !r.operations.is_empty() {
        out.push_str(
            "\nOperations (present by structure; `available` once the remote accepted one):\n\n",
        );
        for (op, status) in &r.operations {
            let name = serde_json::to_value(op).unwrap_or_default();
            let status = serde_json::to_value(status).unwrap_or_default();
            out.push_str(&format!(
                "- {}: {}\n",
                name.as_str().unwrap_or("?"),
                status.as_str().unwrap_or("?")
            ));
        }
    }
    out
}

/// Each section's checks, as a table.
fn sections(r: &Report) -> String {
    let mut out = String::new();
    for section in Section::ALL {
        let checks: Vec<_> = r.checks.iter().filter(|c| c.section == section).collect();
        if checks.is_empty() {
            continue;
        }
        out.push_str(&format!("\n## {}\n\n", section.title()));
        out.push_str("| Check | Grade | Evidence | ms |\n|---|---|---|---|\n");
        for c in checks {
            let verdict = match c.grade {
                Grade::Pass => "PASS",
                Grade::Fail => "**FAIL**",
                Grade::Skipped => "SKIPPED",
            };
            out.push_str(&format!(
                "| `{}` {} | {verdict} | {} | {} |\n",
                c.id.name(),
                cell(c.id.proves()),
                cell(&c.evidence),
                c.ms
            ));
        }
    }
    out
}

/// §25's deployment part, in its order (build, Argus, Foreman, heartbeat, tests, deployment), from
/// what the running deployment said of itself and the records named; each unknown says why.
fn deployment(d: &super::DeploymentPart) -> String {
    let unknown = || format!("not known: {}", d.unknown.as_deref().unwrap_or("not read"));
    let deployed = d.deployed.as_ref();
    let (told, whose) = d.told_build();
    let mut rows: Vec<(&str, String)> = vec![
        (
            "Branch",
            told.branch.as_deref().map_or_else(
                || format!("not known: {whose} was not made in a Git checkout on a branch"),
                |b| format!("{b} ({whose})"),
            ),
        ),
        (
            "Base SHA",
            told.base.as_ref().map_or_else(
                || format!("not known: {whose} found no base (build with ARGUS_BASE_REF=<ref>, else origin/main is used)"),
                |b| format!("{} (merge-base with {})", b.commit, b.of),
            ),
        ),
        ("Final SHA", format!("{} ({whose})", told.commit)),
        ("Files added/changed", files(told, whose)),
    ];
    rows.extend(argus_and_foreman(d, &unknown));
    rows.extend(heartbeat(d, &unknown));
    rows.extend(tests(d, told));
    rows.extend([
        ("Image build result (the HF Space's image)", images(d, told)),
        (
            "Build SHA (this report's build)",
            format!("{} commit {}", d.build.version, d.build.commit),
        ),
        (
            "Deployed SHA (the running daemon's /health)",
            deployed.map_or_else(unknown, |x| {
                format!("{} commit {}", x.build.version, x.build.commit)
            }),
        ),
        (
            "/health SHA match",
            match d.matches() {
                Some(true) => "yes".into(),
                Some(false) => "**NO**: the deployment runs another build".into(),
                None if deployed.is_some() => {
                    "not known: a build that does not know its commit".into()
                }
                None => unknown(),
            },
        ),
        (
            "State root",
            deployed.map_or_else(unknown, |x| x.state_root.clone()),
        ),
    ]);
    let mut out = String::from("\n## Deployment\n\n| | |\n|---|---|\n");
    for (k, v) in rows {
        out.push_str(&format!("| {k} | {} |\n", cell(&v)));
    }
    out.push_str("\n## Known limitations\n\n");
    for l in super::limitations::KNOWN {
        out.push_str(&format!("- {l}\n"));
    }
    out
}

fn files(told: &crate::deployment::Build, whose: &str) -> String {
    match &told.files {
        None => format!("not known: {whose} found no base to compare with"),
        Some(f) if f.total() == 0 => "none: the build is its base".into(),
        Some(f) => {
            let more = f.total() as usize - f.named.len().min(f.total() as usize);
            let mut text = format!(
                "{} added, {} changed, {} deleted: {}",
                f.added,
                f.changed,
                f.deleted,
                f.named.join(", ")
            );
            if more > 0 {
                text.push_str(&format!(" and {more} more"));
            }
            text
        }
    }
}

/// What a row says when the deployment's build is older than the field it would fill.
const OLDER: &str = "not known: the deployment's build does not say (older than this one)";

fn argus_and_foreman(
    d: &super::DeploymentPart,
    unknown: &dyn Fn() -> String,
) -> Vec<(&'static str, String)> {
    let deployed = d.deployed.as_ref();
    vec![
        (
            "Argus installed (version, wheel pin)",
            match deployed.map(|x| &x.argus_installed) {
                Some(Some(i)) => format!(
                    "{} {}, wheel sha256 {}",
                    i.package,
                    i.version,
                    i.wheel_sha256.as_deref().unwrap_or("not recorded by pip")
                ),
                Some(None) => {
                    "none: no Argus runtime is configured, or its venv has no argus-skill".into()
                }
                None => unknown(),
            },
        ),
        (
            "Argus executable",
            match deployed {
                Some(x) => x
                    .argus_executable
                    .clone()
                    .unwrap_or_else(|| "none: no Argus runtime is configured".into()),
                None => unknown(),
            },
        ),
        (
            "Argus persistent state root (its home)",
            match deployed {
                Some(x) => x
                    .argus_home
                    .clone()
                    .unwrap_or_else(|| "none: no Argus runtime is configured".into()),
                None => unknown(),
            },
        ),
        (
            "Argus backend configuration source",
            deployed.map_or_else(unknown, |x| {
                let source = serde_json::to_value(x.argus_backend_source).unwrap_or_default();
                format!(
                    "{} (from {})",
                    x.argus_backend.as_deref().unwrap_or("Argus's default"),
                    source.as_str().unwrap_or("?")
                )
            }),
        ),
        (
            "Foreman installed",
            match (deployed, &d.foreman_runtime) {
                (Some(_), Some(f)) => format!(
                    "foreman-core {}, wheel sha256 {}",
                    f.foreman_core,
                    f.sha256.as_deref().unwrap_or("not reported")
                ),
                (Some(_), None) => "none: Foreman is off, or its runtime does not answer".into(),
                (None, _) => unknown(),
            },
        ),
        (
            "Foreman integration mode",
            match deployed.map(|x| x.foreman_integration) {
                Some(Some(m)) => m.says().into(),
                Some(None) => OLDER.into(),
                None => unknown(),
            },
        ),
    ]
}

fn heartbeat(
    d: &super::DeploymentPart,
    unknown: &dyn Fn() -> String,
) -> Vec<(&'static str, String)> {
    let deployed = d.deployed.as_ref();
    vec![
        (
            "Heartbeat cadence",
            match deployed.map(|x| x.heartbeat_seconds) {
                Some(Some(s)) => format!("every {s} s per supervised campaign"),
                Some(None) => OLDER.into(),
                None => unknown(),
            },
        ),
        (
            "No-model fast path",
            match &d.heartbeat {
                None => unknown(),
                Some(h) if h.ticks == 0 => "not shown: the deployment has ticked no heartbeat since it started (no campaign supervised)".into(),
                Some(h) => {
                    let boundaries = h
                        .decision_points
                        .map_or_else(|| "an unknown number of".into(), |n| n.to_string());
                    match h.argus_wakes {
                        Some(w) => format!(
                            "{} heartbeat ticks decided by the state machine alone; Argus (the one model) woken {w} times, for {boundaries} decision boundaries",
                            h.ticks
                        ),
                        None => format!(
                            "{} heartbeat ticks decided by the state machine alone; no model attached (the operator decides at the {boundaries} decision boundaries reached)",
                            h.ticks
                        ),
                    }
                }
            },
        ),
        (
            "Significant event classes",
            match deployed {
                Some(x) if x.event_classes.is_empty() => OLDER.into(),
                Some(x) => x.event_classes.join(", "),
                None => unknown(),
            },
        ),
    ]
}

fn tests(
    d: &super::DeploymentPart,
    told: &crate::deployment::Build,
) -> Vec<(&'static str, String)> {
    let counts = |c: &super::deployment::TestCounts| {
        format!(
            "{} passed, {} failed, {} ignored",
            c.passed, c.failed, c.ignored
        )
    };
    match &d.tests {
        Err(why) => vec![
            ("Tests: unit", format!("not known: {why}")),
            ("Tests: integration", format!("not known: {why}")),
        ],
        Ok(t) => {
            let run = format!(
                "{}{}",
                ran_on(&t.commit, told),
                ended(&t.finished_at, t.exit_code)
            );
            vec![
                ("Tests: unit", format!("{} ({run})", counts(&t.unit))),
                (
                    "Tests: integration",
                    format!(
                        "{}; the OpenOperator plugin under the real OpenOperator: {} ({run})",
                        counts(&t.integration),
                        counts(&t.openoperator)
                    ),
                ),
            ]
        }
    }
}

fn ran_on(commit: &str, told: &crate::deployment::Build) -> String {
    if commit == told.commit {
        format!("commit {commit}")
    } else {
        format!(
            "commit {commit}, **not** the build told of ({})",
            told.commit
        )
    }
}

fn ended(at: &str, exit_code: i32) -> String {
    match exit_code {
        0 => format!(", finished {at}"),
        n => format!(", finished {at}, **exit code {n}**"),
    }
}

fn images(d: &super::DeploymentPart, told: &crate::deployment::Build) -> String {
    match &d.image {
        Err(why) => format!("not known: {why}"),
        Ok(b) => {
            let built: Vec<String> = b
                .images
                .iter()
                .map(|i| {
                    format!(
                        "{} (id {}, {} MiB, built in {} s)",
                        i.name,
                        i.id.get(..12).unwrap_or(&i.id),
                        i.size_bytes / (1 << 20),
                        i.build_seconds
                    )
                })
                .collect();
            let checks = if b.checks_passed {
                "their container checks passed"
            } else {
                "**their container checks failed**"
            };
            format!(
                "built: {}; {checks} ({}, finished {})",
                built.join(", "),
                ran_on(&b.commit, told),
                b.finished_at
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::cell;

    #[test]
    fn the_deployment_part_says_a_match_a_mismatch_and_what_is_not_known() {
        use crate::deployment::{BackendSource, Build, Deployment};
        let build = |c: &str| Build {
            commit: c.into(),
            ..Build::unknown()
        };
        let mut part =
            super::super::DeploymentPart::not_read(build("abc"), "no running deployment was named");
        let text = super::deployment(&part);
        assert!(
            text.contains("| /health SHA match | not known: no running deployment was named |"),
            "{text}"
        );
        assert!(
            text.contains("| Build SHA (this report's build) | 0.1.0 commit abc |"),
            "{text}"
        );
        part.unknown = None;
        part.deployed = Some(Deployment {
            build: build("def"),
            state_root: "/a0/usr/argus-supervisor".into(),
            argus_installed: None,
            argus_backend: None,
            argus_backend_source: BackendSource::ArgusDefault,
            argus_executable: None,
            argus_home: None,
            foreman_integration: None,
            heartbeat_seconds: None,
            event_classes: vec![],
        });
        let text = super::deployment(&part);
        // A build older than this one says nothing of these: not known, and why.
        for row in [
            "Foreman integration mode",
            "Heartbeat cadence",
            "Significant event classes",
        ] {
            assert!(
                text.contains(&format!(
                    "| {row} | not known: the deployment's build does not say (older than this one) |"
                )),
                "{text}"
            );
        }
        assert!(
            text.contains("| Files added/changed | not known: the deployment's build found no base to compare with |"),
            "{text}"
        );
        assert!(
            text.contains("| /health SHA match | **NO**: the deployment runs another build |"),
            "{text}"
        );
        assert!(
            text.contains(
                "| Argus backend configuration source | Argus's default (from argus_default) |"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "| Foreman installed | none: Foreman is off, or its runtime does not answer |"
            ),
            "{text}"
        );
        if let Some(d) = part.deployed.as_mut() {
            d.build = build("abc");
        }
        assert!(super::deployment(&part).contains("| /health SHA match | yes |"));
        part.build = build("unknown");
        assert!(super::deployment(&part)
            .contains("| /health SHA match | not known: a build that does not know its commit |"));
    }

    #[test]
    fn a_cell_keeps_remote_ids_as_text_in_one_row() {
        assert_eq!(
            cell("task <script>|x\ny & z"),
            "task &lt;script&gt;\\|x y &amp; z"
        );
    }
}
