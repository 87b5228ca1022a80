//! `argus-supervisor qualify`: the command line of `argus_supervisor_lib::qualify` — its inputs
//! checked once here, the report printed (Markdown, or JSON with `--json`), the exit code.

use argus_machines::CampaignId;
use argus_supervisor_lib::a2a::HttpConfig;
use argus_supervisor_lib::qualify::{self as q, Standing};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// The longest `--message` accepted: a harmless test task is short.
const MESSAGE_MAX_BYTES: usize = 4096;

pub struct Args {
    pub http: HttpConfig,
    pub task: Option<String>,
    pub write_campaign: Option<String>,
    pub message: Option<String>,
    pub project: Option<String>,
    pub controller_id: String,
    pub lease_ttl_seconds: u64,
    pub daemon: bool,
    pub daemon_heartbeat_seconds: u64,
    pub step_timeout_seconds: u64,
    pub home: PathBuf,
    pub json: bool,
    pub report: Option<PathBuf>,
    pub deployment: Option<String>,
    pub test_results: Option<PathBuf>,
    pub image_build: Option<PathBuf>,
}

fn usage(text: &str) -> ExitCode {
    eprintln!("qualify: {text}");
    ExitCode::from(2)
}

/// The write phase's plan, when a test campaign and a harmless task are named.
fn write_plan(
    campaign: Option<String>,
    message: Option<String>,
    project: Option<String>,
    ttl_secs: u64,
) -> Result<Option<q::WritePlan>, ExitCode> {
    Ok(match (campaign, message) {
        (Some(campaign), Some(message)) => {
            let campaign = match CampaignId::parse(campaign) {
                Ok(c) => c,
                Err(e) => return Err(usage(&format!("--write-campaign: {e}"))),
            };
            if message.trim().is_empty() || message.len() > MESSAGE_MAX_BYTES {
                return Err(usage(&format!(
                    "--message: 1 to {MESSAGE_MAX_BYTES} bytes of text"
                )));
            }
            Some(q::WritePlan {
                campaign_id: campaign.as_str().to_string(),
                message,
                project,
                ttl_secs,
            })
        }
        _ => None,
    })
}

/// The live acceptance's plan: a child `serve` of this very executable.
fn daemon_plan(daemon: bool, heartbeat_secs: u64) -> Result<Option<q::DaemonPlan>, ExitCode> {
    Ok(match (daemon, std::env::current_exe()) {
        (false, _) => None,
        (true, Ok(binary)) => Some(q::DaemonPlan {
            binary,
            heartbeat_secs,
            pass_env: [
                "ARGUS_SUPERVISOR_CA_FILE",
                "ARGUS_SUPERVISOR_CA_ONLY",
                "SSL_CERT_FILE",
                "SSL_CERT_DIR",
                "HTTPS_PROXY",
                "https_proxy",
                "NO_PROXY",
                "no_proxy",
            ]
            .into_iter()
            .map(String::from)
            .collect(),
        }),
        (true, Err(e)) => {
            return Err(usage(&format!(
                "--daemon: cannot find this executable: {e}"
            )))
        }
    })
}

pub async fn run(a: Args) -> ExitCode {
    if let Err(e) =
        argus_supervisor_lib::a2a::Endpoint::parse(&a.http.endpoint, a.http.allow_insecure_loopback)
    {
        return usage(&format!("--url: {e}"));
    }
    if !argus_supervisor_lib::daemon::valid_controller_id(&a.controller_id)
        || a.controller_id.len() > 100
    {
        return usage("--controller-id: 1-100 characters of A-Z a-z 0-9 - _ . :");
    }
    // The seconds' ranges are clap's (`value_parser`), said and refused before this runs.
    let write = match write_plan(a.write_campaign, a.message, a.project, a.lease_ttl_seconds) {
        Ok(w) => w,
        Err(code) => return code,
    };
    let daemon = match daemon_plan(a.daemon, a.daemon_heartbeat_seconds) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let report = q::run(q::Options {
        http: a.http,
        task: a.task,
        controller_id: a.controller_id,
        write,
        daemon,
        step_timeout: Duration::from_secs(a.step_timeout_seconds),
        home: a.home,
        tool: crate::tool(),
        build: crate::build(),
        deployment: a.deployment,
        test_results: a.test_results,
        image_build: a.image_build,
    })
    .await;
    let markdown = report.markdown();
    if let Some(path) = &a.report {
        if let Err(e) = std::fs::write(path, &markdown) {
            eprintln!(
                "qualify: cannot write the report to {}: {e}",
                path.display()
            );
        }
    }
    if a.json {
        match serde_json::to_string_pretty(&report) {
            Ok(s) => println!("{s}"),
            Err(e) => eprintln!("qualify: cannot render the report: {e}"),
        }
    } else {
        print!("{markdown}");
    }
    match report.standing {
        Standing::Qualified => ExitCode::SUCCESS,
        Standing::Failed => ExitCode::FAILURE,
        Standing::ObserverOnly | Standing::ReadOnly => ExitCode::from(3),
    }
}
