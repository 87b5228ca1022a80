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
    match &r.record {
        Some(p) => out.push_str(&format!("\nRecord kept: `{}`\n", p.display())),
        None => out.push_str("\nNo record kept.\n"),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::cell;

    #[test]
    fn a_cell_keeps_remote_ids_as_text_in_one_row() {
        assert_eq!(
            cell("task <script>|x\ny & z"),
            "task &lt;script&gt;\\|x y &amp; z"
        );
    }
}
