//! `argus-supervisor qualify`'s command line: its arguments, its inputs checked once here, the
//! report printed (Markdown, or JSON with `--json`), the exit code.

use super::{self as q, Standing};
use crate::a2a::HttpConfig;
use argus_machines::CampaignId;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// The longest `--message` accepted: a harmless test task is short.
const MESSAGE_MAX_BYTES: usize = 4096;

/// `qualify`'s arguments but the remote's (the binary flattens those beside these: `probe`
/// shares them).
#[derive(Debug, Clone, clap::Args)]
pub struct QualifyArgs {
    /// A task to read with tasks/get (historyLength 0); without it an unknown id is asked.
    #[arg(long)]
    pub task: Option<String>,
    /// The dedicated test campaign of the write phase. Nothing is written without it.
    #[arg(long, requires = "message", value_name = "ID")]
    pub write_campaign: Option<String>,
    /// The harmless task text the write phase submits (then cancels).
    #[arg(long, requires = "write_campaign", value_name = "TEXT")]
    pub message: Option<String>,
    /// Project selection sent with the submit.
    #[arg(long, env = "OPENTRAINING_A2A_PROJECT", value_name = "NAME")]
    pub project: Option<String>,
    /// The controller id the write phase claims as (`<id>-second` tries to take over,
    /// `<id>-daemon` is the child serve's).
    #[arg(long, default_value = "argus-qualify", value_name = "ID")]
    pub controller_id: String,
    /// The TTL of the write phase's lease.
    #[arg(long, default_value_t = 120, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(10..=86_400))]
    pub lease_ttl_seconds: u64,
    /// Also run the live acceptance: a child `serve` on a throwaway state root claims the
    /// test campaign, submits, is killed (SIGKILL) and restarted, then cancels and releases.
    #[arg(long, requires = "write_campaign")]
    pub daemon: bool,
    /// The child serve's heartbeat.
    #[arg(long, default_value_t = 1, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=60))]
    pub daemon_heartbeat_seconds: u64,
    /// The bound on each step.
    #[arg(long, default_value_t = 30, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=600))]
    pub step_timeout_seconds: u64,
    #[command(flatten)]
    pub root: crate::settings::StateRootArgs,
    /// Print the report as JSON instead of Markdown.
    #[arg(long)]
    pub json: bool,
    /// Also write the Markdown report to this file.
    #[arg(long, value_name = "PATH")]
    pub report: Option<PathBuf>,
    /// The running deployment's API (`http://HOST:PORT` or `unix:PATH`), whose `health` fills
    /// the report's deployment part (its build, Argus and Foreman as installed, state root).
    #[arg(long, env = "ARGUS_SUPERVISOR_URL", value_name = "URL")]
    pub deployment: Option<String>,
    /// The test run's record for the report's Tests part (scripts/test.sh writes it, at
    /// `$CARGO_TARGET_DIR/argus-test-results.json` unless ARGUS_TEST_RESULTS names another).
    #[arg(long, value_name = "PATH")]
    pub test_results: Option<PathBuf>,
    /// The image build's record for the report's Deployment part (scripts/images.sh writes it,
    /// at `$CARGO_TARGET_DIR/argus-image-build.json` unless ARGUS_IMAGE_RESULTS names another).
    #[arg(long, value_name = "PATH")]
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

/// Qualify the remote `http` reaches as `a` asks, with this binary's `build`: print the report,
/// and say how it stands in the exit code (0 qualified, 1 failed, 3 observer or read-only only,
/// 2 a usage error).
pub async fn run(http: HttpConfig, a: QualifyArgs, build: crate::deployment::Build) -> ExitCode {
    if let Err(e) = crate::a2a::Endpoint::parse(&http.endpoint, http.allow_insecure_loopback) {
        return usage(&format!("--url: {e}"));
    }
    if !crate::settings::valid_controller_id(&a.controller_id) || a.controller_id.len() > 100 {
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
        http,
        task: a.task,
        controller_id: a.controller_id,
        write,
        daemon,
        step_timeout: Duration::from_secs(a.step_timeout_seconds),
        home: a.root.home,
        tool: build.tool(),
        build,
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
