//! `argus-supervisor probe`: the remote's card and capabilities, its qualification record and
//! Foreman as serve would run it, said as text (or JSON with `--json`); exit 0 when compatible.

use crate::RemoteArgs;
use std::process::ExitCode;

pub fn run(
    remote: RemoteArgs,
    as_json: bool,
    home: &std::path::Path,
    max_age_days: u64,
    foreman: &argus_supervisor_lib::settings::ForemanArgs,
) -> ExitCode {
    use argus_supervisor_lib::a2a;
    let config = match crate::remote_config(remote) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut report = runtime.block_on(a2a::probe(&config));
    report.qualification = report.card_sha256.as_deref().map(|sha| {
        argus_supervisor_lib::qualification::Book::new(home, &config.endpoint)
            .max_age_days(max_age_days)
            .status(sha)
    });
    report.qualification_root = Some(home.display().to_string());
    // Foreman as serve would run it, asked what it is: the pin is the runtime's word.
    report.foreman = Some(match foreman.foreman() {
        Some(f) => runtime.block_on(f.pin()),
        None => argus_supervisor_lib::bridges::foreman::ForemanPin::Off,
    });
    if as_json {
        match serde_json::to_string_pretty(&report) {
            Ok(s) => println!("{s}"),
            Err(e) => eprintln!("cannot render the report: {e}"),
        }
    } else {
        print!("{}", render(&report));
    }
    if report.compatibility.is_compatible() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn render(r: &argus_supervisor_lib::a2a::ProbeReport) -> String {
    let mut out = String::new();
    use argus_supervisor_lib::api::view::word;
    out.push_str(&format!("endpoint       {}\n", r.endpoint));
    out.push_str(&format!("token          {}\n", r.auth.describe()));
    out.push_str(&format!("compatibility  {}\n", word(&r.compatibility)));
    if let Some(e) = r.error {
        match &r.error_detail {
            Some(d) => out.push_str(&format!("error          {e}: {d}\n")),
            None => out.push_str(&format!("error          {e}\n")),
        }
    }
    if let Some(d) = r.dialect {
        let stated = r
            .card_protocol_version
            .as_deref()
            .map(|v| format!(" (the card says protocolVersion {v})"))
            .unwrap_or_default();
        out.push_str(&format!("dialect        {}{stated}\n", word(&d)));
    }
    out.push_str(&format!(
        "timestamps     a time without a zone is read as UTC{} (ARGUS_SUPERVISOR_REMOTE_TIME_OFFSET)\n",
        r.naive_times_read_as
    ));
    if let (Some(h), Some(p)) = (&r.card_sha256, r.card_path) {
        out.push_str(&format!("card           {p} sha256:{h}\n"));
    }
    out.push_str(&format!(
        "mutation       {} ({})\n",
        if r.mutation_enabled {
            "enabled"
        } else {
            "disabled"
        },
        r.mutation_reason
    ));
    for (op, status) in &r.operations {
        out.push_str(&format!("  {:<16} {}\n", word(&op), word(&status)));
    }
    if let Some(q) = &r.qualification {
        let root = r
            .qualification_root
            .as_deref()
            .map(|h| format!(" (records of the state root {h}: `--home` or ARGUS_SUPERVISOR_HOME names serve's)"))
            .unwrap_or_default();
        out.push_str(&format!("qualification  {}{root}\n", q.detail));
    }
    if let Some(f) = &r.foreman {
        out.push_str(&format!("foreman        {}\n", f.describe()));
    }
    out.push_str(&format!(
        "can            {}\n",
        if r.can.is_empty() {
            "nothing".to_string()
        } else {
            r.can.join(", ")
        }
    ));
    out
}
