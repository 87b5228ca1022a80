//! The settings as declared: each once, with its flag, its environment variable, its default and
//! the parser that makes it typed. `serve --help` lists them; `probe`, `qualify` and `bench` share
//! the groups they read too ([`ReachArgs`], [`ForemanArgs`]).
//!
//! Every parsed setting goes through [`Parse`]: an empty variable counts as unset (the default),
//! and a refused value is said as `invalid configuration: VARIABLE: what it expects`, with exit
//! code 2, before anything starts, never echoing the value (a URL's path may carry a token). Free
//! text (the remote's URL, tokens, paths) stays text; [`set`] reads an empty one as unset, and
//! what depends on another setting (the URL on `--allow-insecure-loopback`, the API token on the
//! listener) is checked by `ServeConfig::from_args`.

use crate::a2a::{HttpConfig, TrustError};
use crate::bridges::foreman::Foreman;
use clap::builder::TypedValueParser;
use std::ffi::OsStr;
use std::net::SocketAddr;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A configuration error: names the variable, never echoes a secret value.
#[derive(Debug, thiserror::Error)]
#[error("invalid configuration: {variable}: {problem}")]
pub struct ConfigError {
    pub variable: &'static str,
    pub problem: String,
}

pub(crate) fn bad(variable: &'static str, problem: impl Into<String>) -> ConfigError {
    ConfigError {
        variable,
        problem: problem.into(),
    }
}

/// A free-text setting, `None` when unset or empty.
pub(crate) fn set(v: &Option<String>) -> Option<String> {
    v.clone().filter(|v| !v.trim().is_empty())
}

/// A setting's parser: the trimmed text (an empty one is the setting's default) made into `T`,
/// or the variable named with what it expects.
#[derive(Clone)]
pub struct Parse<T>(Arc<Parser<T>>);

type Parser<T> = dyn Fn(&str) -> Result<T, String> + Send + Sync;

impl<T> Parse<T> {
    fn new(parse: impl Fn(&str) -> Result<T, String> + Send + Sync + 'static) -> Parse<T> {
        Parse(Arc::new(parse))
    }
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Parse<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        raw: &OsStr,
    ) -> Result<T, clap::Error> {
        let name = arg
            .and_then(clap::Arg::get_env)
            .and_then(OsStr::to_str)
            .map(str::to_string)
            .or_else(|| arg.and_then(clap::Arg::get_long).map(|l| format!("--{l}")))
            .unwrap_or_else(|| "a setting".into());
        let refuse = |problem: String| {
            let said = format!("invalid configuration: {name}: {problem}\n");
            clap::Error::raw(clap::error::ErrorKind::ValueValidation, said).with_cmd(cmd)
        };
        let text = raw.to_str().ok_or_else(|| refuse("is not UTF-8".into()))?;
        // An empty variable counts as unset.
        let text = match text.trim() {
            "" => arg
                .and_then(|a| a.get_default_values().first())
                .and_then(|d| d.to_str())
                .unwrap_or(""),
            text => text,
        };
        (self.0)(text).map_err(refuse)
    }
}

/// A whole number within `range`, or `expected` said (a number out of range is said too: it is
/// a number, never a secret).
pub fn whole(range: RangeInclusive<u64>, expected: &'static str) -> Parse<u64> {
    Parse::new(move |t| match t.parse::<u64>() {
        Ok(n) if range.contains(&n) => Ok(n),
        Ok(n) => Err(format!("{expected}; it is {n}")),
        Err(_)
            if t.strip_prefix('-')
                .is_some_and(|d| d.parse::<u64>().is_ok()) =>
        {
            Err(format!("{expected}; it is negative"))
        }
        Err(_) => Err(format!("{expected}; it is not a whole number")),
    })
}

/// Any whole number.
pub fn number() -> Parse<u64> {
    whole(0..=u64::MAX, "expected a whole number, 0 or more")
}

/// Any whole number, brought into `range` (a setting whose far values mean "as far as it goes").
pub fn clamped(range: RangeInclusive<u64>) -> Parse<u64> {
    let (lo, hi) = range.into_inner();
    Parse::new(move |t| {
        t.parse::<u64>()
            .map(|n| n.clamp(lo, hi))
            .map_err(|_| format!("expected a whole number (from {lo} to {hi})"))
    })
}

/// `1`, `true`, `yes` or `0`, `false`, `no`.
pub fn flag() -> Parse<bool> {
    Parse::new(|t| match t {
        "1" | "true" | "yes" => Ok(true),
        "0" | "false" | "no" => Ok(false),
        _ => Err("expected 1 or 0".into()),
    })
}

/// Hot polling's request budget: requests per second, 0.1 to 1000.
pub fn rate() -> Parse<f64> {
    Parse::new(|t| {
        t.parse::<f64>()
            .ok()
            .filter(|r| (0.1..=1000.0).contains(r))
            .ok_or_else(|| "must be a number of requests per second from 0.1 to 1000".into())
    })
}

/// A zone as `+HH:MM` or `-HH:MM`, in seconds east of UTC.
pub fn offset() -> Parse<i32> {
    Parse::new(|t| {
        crate::time::parse_offset(t)
            .ok_or_else(|| "must be an offset from UTC as +HH:MM or -HH:MM".into())
    })
}

/// A controller id as leases carry it.
pub fn controller_id() -> Parse<String> {
    Parse::new(|t| match valid_controller_id(t) {
        true => Ok(t.to_string()),
        false => Err("1-128 characters of A-Z a-z 0-9 - _ . :".into()),
    })
}

/// A directory (the state root).
pub fn dir() -> Parse<PathBuf> {
    Parse::new(|t| Ok(PathBuf::from(t)))
}

/// A controller id as leases carry it: 1-128 characters of `A-Z a-z 0-9 - _ . :`.
pub fn valid_controller_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
}

/// Where `serve` listens: one TCP address, or one Unix socket (no TCP listener at all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    Tcp(SocketAddr),
    /// `unix:PATH`: a socket file, mode 0600; a relative path is under the state root
    /// (`ServeConfig::from_args` puts it there).
    Unix(PathBuf),
}

impl std::fmt::Display for Listen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Listen::Tcp(a) => write!(f, "{a}"),
            Listen::Unix(p) => write!(f, "unix:{}", p.display()),
        }
    }
}

/// `HOST:PORT` or `unix:PATH`.
pub fn listen() -> Parse<Listen> {
    Parse::new(|t| match t.strip_prefix("unix:") {
        Some("") => Err("unix: needs a path".into()),
        Some(path) => Ok(Listen::Unix(PathBuf::from(path))),
        None => t
            .parse()
            .map(Listen::Tcp)
            .map_err(|_| "expected HOST:PORT or unix:PATH".into()),
    })
}

/// The names of variables passed on to a child (Argus, Foreman), checked: a name of ours that
/// carries a secret (the OpenTraining or API token) is refused, so no setting can hand it on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvNames(pub Vec<String>);

/// A list of variable names, comma- or space-separated, for `child`.
pub fn env_names(child: &'static str) -> Parse<EnvNames> {
    Parse::new(move |t| {
        let mut names = vec![];
        for name in t
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|n| !n.is_empty())
        {
            if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return Err(format!("{name:?} is not a variable name"));
            }
            if SECRET_SETTINGS.iter().any(|(_, secret)| *secret == name) {
                return Err(format!("{name} is never given to {child}"));
            }
            names.push(name.to_string());
        }
        Ok(EnvNames(names))
    })
}

/// The settings that are secrets: read from the environment only, never echoed; `serve --help`
/// says whether each is set.
pub const SECRET_SETTINGS: [(&str, &str); 2] = [
    ("remote_token", "OPENTRAINING_A2A_TOKEN"),
    ("api_token", "ARGUS_SUPERVISOR_API_TOKEN"),
];

/// The state root: `serve`'s, read the same way by every command that works on it (`probe`,
/// `backup`, `restore`, `confirm-upgrade`, `qualify`).
#[derive(clap::Args, Debug, Clone)]
pub struct StateRootArgs {
    /// State root.
    #[arg(long = "home", env = "ARGUS_SUPERVISOR_HOME", value_name = "DIR",
          default_value = "/a0/usr/argus-supervisor", value_parser = dir())]
    pub home: PathBuf,
}

/// How long a passing qualification record is trusted: `serve`'s setting, which `probe` reports
/// by.
#[derive(clap::Args, Debug, Clone)]
pub struct QualificationArgs {
    /// How many days a passing qualification record is trusted; older, writes wait for `qualify`
    /// again (with ARGUS_SUPERVISOR_REQUIRE_QUALIFICATION).
    #[arg(long, env = "ARGUS_SUPERVISOR_QUALIFICATION_MAX_AGE_DAYS", value_name = "DAYS",
          default_value_t = crate::qualification::DEFAULT_MAX_AGE_DAYS,
          value_parser = number())]
    pub qualification_max_age_days: u64,
}

/// `serve`'s configuration as declared: each setting once, with its variable, default and meaning
/// (`serve --help` lists them). `ServeConfig::from_args` checks what depends on another setting.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Configuration (flag or environment variable)")]
pub struct ServeArgs {
    /// The remote's A2A base URL: HTTPS (plain HTTP only on loopback with
    /// --allow-insecure-loopback); may carry a path such as /a2a/t-<token>/, so it is never printed.
    /// Required.
    #[arg(
        long = "remote-url",
        env = "OPENTRAINING_A2A_URL",
        hide_env_values = true,
        value_name = "URL"
    )]
    pub remote_url: Option<String>,
    /// Token sent to the remote as `Authorization: Bearer` and `X-API-KEY` (environment only).
    #[arg(
        long = "remote-token",
        env = "OPENTRAINING_A2A_TOKEN",
        hide_env_values = true,
        value_name = "SECRET"
    )]
    pub remote_token: Option<String>,
    /// Project selection sent with submits.
    #[arg(long, env = "OPENTRAINING_A2A_PROJECT", value_name = "NAME")]
    pub project: Option<String>,
    /// Our controller id in leases (1-128 of A-Z a-z 0-9 - _ . :).
    #[arg(long, env = "ARGUS_SUPERVISOR_CONTROLLER_ID", value_name = "ID",
          default_value = "argus-openoperator", value_parser = controller_id())]
    pub controller_id: String,
    /// 0: serve the persisted state read-only; no polling, no mutation.
    #[arg(long, env = "ARGUS_SUPERVISOR_ENABLED", value_name = "0|1", default_value = "1",
          value_parser = flag(), action = clap::ArgAction::Set)]
    pub enabled: bool,
    /// Poll cadence in seconds (jittered ±10%).
    #[arg(long, env = "ARGUS_SUPERVISOR_HEARTBEAT_SECONDS", value_name = "SECONDS",
          default_value = "120", value_parser = whole(1..=86_400, "must be a whole number of seconds from 1 to 86400"))]
    pub heartbeat_seconds: u64,
    /// Lease TTL in seconds; must exceed two heartbeats + 60 s, at most 1 day.
    #[arg(long, env = "ARGUS_SUPERVISOR_LEASE_TTL_SECONDS", value_name = "SECONDS",
          default_value = "600", value_parser = number())]
    pub lease_ttl_seconds: u64,
    /// A controlled campaign whose attempt is live (running or asking) is also read this often
    /// between heartbeats, within the request budget; 0: off (1-3600).
    #[arg(long, env = "ARGUS_SUPERVISOR_HOT_POLL_SECONDS", value_name = "SECONDS",
          default_value = "2", value_parser = whole(0..=3600, "must be 0 (off) or 1-3600"))]
    pub hot_poll_seconds: u64,
    /// Requests per second hot polling may add to the remote, on top of the heartbeat's, shared by
    /// the live campaigns (0.1-1000).
    #[arg(long, env = "ARGUS_SUPERVISOR_REMOTE_BUDGET_RPS", value_name = "REQUESTS",
          default_value = "4", value_parser = rate())]
    pub remote_budget_rps: f64,
    /// Subscriptions open at once where the remote's card says it streams (a live campaign's
    /// updates ring for a read); beyond them, hot polling; 0: never stream (0-100000).
    #[arg(long, env = "ARGUS_SUPERVISOR_MAX_STREAMS", value_name = "STREAMS",
          default_value = "1024", value_parser = whole(0..=100_000, "must be 0 (never stream) to 100000"))]
    pub max_streams: u64,
    /// A stream with no byte for this long is closed, the task read and a new stream opened
    /// (5-86400).
    #[arg(long, env = "ARGUS_SUPERVISOR_STREAM_SILENCE_SECONDS", value_name = "SECONDS",
          default_value = "300", value_parser = whole(5..=86_400, "must be 5 to 86400"))]
    pub stream_silence_seconds: u64,
    /// Wait after a write became ambiguous before reading it back (at most 1 day).
    #[arg(long, env = "ARGUS_SUPERVISOR_READBACK_GRACE_SECONDS", value_name = "SECONDS",
          default_value = "60", value_parser = whole(0..=86_400, "must be at most 1 day"))]
    pub readback_grace_seconds: u64,
    /// How long an upgrade's copy of the documents it rewrote is kept (`confirm-upgrade` drops
    /// it sooner; at most 3650).
    #[arg(long, env = "ARGUS_SUPERVISOR_UPGRADE_KEEP_DAYS", value_name = "DAYS",
          default_value = "14", value_parser = clamped(0..=3650))]
    pub upgrade_keep_days: u64,
    /// Closed campaigns last changed more than this many days ago leave the live set (kept in
    /// `archive/`, readable, exportable); 0 keeps them live.
    #[arg(long, env = "ARGUS_SUPERVISOR_ARCHIVE_AFTER_DAYS", value_name = "DAYS",
          default_value = "30", value_parser = number())]
    pub archive_after_days: u64,
    #[command(flatten)]
    pub qualification: QualificationArgs,
    /// Argus's MCP server executable (argus-plugin-server); unset: no Argus, decisions are the
    /// operator's.
    #[arg(long, env = "ARGUS_SUPERVISOR_ARGUS_BIN", value_name = "PATH")]
    pub argus_bin: Option<String>,
    /// Given to Argus as ARGUS_SKILL_HOME. [default: <state root>/argus-home]
    #[arg(long, env = "ARGUS_SUPERVISOR_ARGUS_HOME", value_name = "DIR")]
    pub argus_home: Option<String>,
    /// Given to Argus as ARGUS_SKILL_RUNNER_BACKEND (its model backend, e.g. codex).
    #[arg(long, env = "ARGUS_SUPERVISOR_BACKEND", value_name = "NAME")]
    pub backend: Option<String>,
    /// Names of further variables passed to Argus (model credentials), comma- or space-separated;
    /// our tokens are refused.
    #[arg(long, env = "ARGUS_SUPERVISOR_ARGUS_ENV", value_name = "NAMES", default_value = "",
          hide_default_value = true, value_parser = env_names("Argus"))]
    pub argus_env: EnvNames,
    /// The mission's bound on attempts Argus may start.
    #[arg(long, env = "ARGUS_SUPERVISOR_MAX_ATTEMPTS", value_name = "N", default_value = "3",
          value_parser = whole(0..=u32::MAX as u64, "too large"))]
    pub max_attempts: u64,
    /// How often Argus's status and decision files are read between wakes (1-3600).
    #[arg(long, env = "ARGUS_SUPERVISOR_ARGUS_POLL_SECONDS", value_name = "SECONDS",
          default_value = "30", value_parser = clamped(1..=3600))]
    pub argus_poll_seconds: u64,
    #[command(flatten)]
    pub foreman: ForemanArgs,
    /// Failed Foreman assessments in a row before the campaign's feed says so (1-100).
    #[arg(long, env = "ARGUS_SUPERVISOR_FOREMAN_FAILURES_TOLD", value_name = "N",
          default_value = "3", value_parser = whole(1..=100, "expected 1-100"))]
    pub foreman_failures_told: u64,
    /// How often the agent card is re-read (1-86400; also before every write).
    #[arg(long, env = "ARGUS_SUPERVISOR_CARD_REFRESH_SECONDS", value_name = "SECONDS",
          default_value = "600", value_parser = clamped(1..=86_400))]
    pub card_refresh_seconds: u64,
    /// 1: claims and new writes are refused here (unqualified_remote) unless `argus-supervisor
    /// qualify` kept a passing record for this remote URL and its current agent card in the state
    /// root.
    #[arg(long, env = "ARGUS_SUPERVISOR_REQUIRE_QUALIFICATION", value_name = "0|1",
          default_value = "1", value_parser = flag(), action = clap::ArgAction::Set)]
    pub require_qualification: bool,
    /// Pin the agent card: any other hash is quarantined_pending_review.
    #[arg(
        long,
        env = "ARGUS_SUPERVISOR_EXPECTED_CARD_SHA256",
        value_name = "HEX"
    )]
    pub expected_card_sha256: Option<String>,
    #[command(flatten)]
    pub reach: ReachArgs,
    #[command(flatten)]
    pub root: StateRootArgs,
    /// The one listener: HOST:PORT, or unix:PATH for a Unix socket (mode 0600; a relative path is
    /// under the state root; then no TCP listener at all).
    #[arg(long, env = "ARGUS_SUPERVISOR_LISTEN", value_name = "HOST:PORT|unix:PATH",
          default_value = "127.0.0.1:8787", value_parser = listen())]
    pub listen: Listen,
    /// The API's token (environment only); required unless --insecure-no-auth on loopback.
    #[arg(
        long = "api-token",
        env = "ARGUS_SUPERVISOR_API_TOKEN",
        hide_env_values = true,
        value_name = "SECRET"
    )]
    pub api_token: Option<String>,
    /// Serve without an API token (refused unless the listener is loopback).
    #[arg(long)]
    pub insecure_no_auth: bool,
    /// Allow a plain-HTTP remote on loopback (tests, the sim).
    #[arg(long, env = "ARGUS_SUPERVISOR_ALLOW_INSECURE_LOOPBACK", value_parser = clap::builder::FalseyValueParser::new())]
    pub allow_insecure_loopback: bool,
    /// Log filter, tracing-subscriber's syntax (e.g. warn, info,argus_supervisor_lib=debug).
    #[arg(
        long = "log-level",
        env = "RUST_LOG",
        default_value = "info",
        value_name = "FILTER"
    )]
    pub log_level: String,
    /// Log every line as JSON.
    #[arg(long, env = "ARGUS_SUPERVISOR_LOG_JSON", value_parser = clap::builder::FalseyValueParser::new())]
    pub log_json: bool,
}

/// How the remote is reached and its times read: `serve`'s settings, which `probe`, `qualify` and
/// `bench --remote` read the same way.
#[derive(Debug, Clone, clap::Args)]
pub struct ReachArgs {
    /// A PEM bundle of CA certificates trusted in addition to the platform's and built-in roots.
    #[arg(long, env = "ARGUS_SUPERVISOR_CA_FILE", value_name = "PATH")]
    pub ca_file: Option<String>,
    /// 1: trust only --ca-file.
    #[arg(long, env = "ARGUS_SUPERVISOR_CA_ONLY", value_name = "0|1", default_value = "0",
          value_parser = flag(), action = clap::ArgAction::Set)]
    pub ca_only: bool,
    /// The zone the remote writes times without one in (Agent Zero: its local time), as +HH:MM
    /// or -HH:MM; `health` says whether the remote writes any.
    #[arg(long, env = "ARGUS_SUPERVISOR_REMOTE_TIME_OFFSET", value_name = "+HH:MM",
          default_value = "+00:00", value_parser = offset())]
    pub remote_time_offset: i32,
}

impl ReachArgs {
    /// The remote at `url` with this trust and zone: an unusable trust setting is refused here
    /// (exit 2, naming the variable) rather than at the first handshake.
    pub fn http(&self, url: String) -> Result<HttpConfig, ConfigError> {
        let ca_file = set(&self.ca_file);
        let mut config = HttpConfig::new(url)
            .with_trust(ca_file.as_deref().map(Path::new), self.ca_only)
            .map_err(|e: TrustError| bad("ARGUS_SUPERVISOR_CA_FILE", e.to_string()))?;
        config.naive_time_offset_secs = self.remote_time_offset;
        Ok(config)
    }
}

/// Foreman's settings: `serve`'s, and what `probe` asks Foreman about.
#[derive(Debug, Clone, clap::Args)]
pub struct ForemanArgs {
    /// 1: consult Foreman (needs Argus) on non-boundary events.
    #[arg(long, env = "ARGUS_SUPERVISOR_FOREMAN_ENABLED", value_name = "0|1", default_value = "0",
          value_parser = flag(), action = clap::ArgAction::Set)]
    pub foreman_enabled: bool,
    /// Foreman's executable.
    #[arg(long, env = "ARGUS_SUPERVISOR_FOREMAN_BIN", value_name = "PATH")]
    pub foreman_bin: Option<String>,
    /// Names of variables passed to Foreman (its decision model's provider, model and
    /// credentials: FOREMAN_*, OPENAI_*, TYPESAFE_*), comma- or space-separated; our tokens are
    /// refused.
    #[arg(long, env = "ARGUS_SUPERVISOR_FOREMAN_ENV", value_name = "NAMES", default_value = "",
          hide_default_value = true, value_parser = env_names("Foreman"))]
    pub foreman_env: EnvNames,
}

impl ForemanArgs {
    /// Foreman as these settings run it; `None` when it is off.
    pub fn foreman(&self) -> Option<Foreman> {
        self.foreman_enabled.then(|| {
            Foreman::new(
                set(&self.foreman_bin)
                    .map(PathBuf::from)
                    .unwrap_or_default(),
                crate::bridges::foreman::DEFAULT_TIMEOUT,
                self.foreman_env.0.clone(),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Probe {
        #[arg(long, env = "ARGUS_SETTINGS_TEST_SECONDS", default_value = "120",
              value_parser = whole(1..=3600, "must be 1-3600"))]
        seconds: u64,
        #[command(flatten)]
        foreman: ForemanArgs,
    }

    #[test]
    fn a_refused_value_names_its_variable_never_echoes_it_and_an_empty_one_is_the_default() {
        let e = Probe::try_parse_from(["p", "--seconds", "s3cr3t"])
            .err()
            .map(|e| e.to_string());
        let said = e.unwrap_or_default();
        assert!(
            said.contains(
                "invalid configuration: ARGUS_SETTINGS_TEST_SECONDS: must be 1-3600; it is not a whole number"
            ),
            "{said}"
        );
        assert!(!said.contains("s3cr3t"), "{said}");
        // A number is said, with what is allowed: it is never a secret.
        let e = Probe::try_parse_from(["p", "--seconds", "3601"])
            .err()
            .map(|e| e.to_string());
        assert!(e.unwrap_or_default().contains("must be 1-3600; it is 3601"));
        let e = Probe::try_parse_from(["p", "--seconds=-5"])
            .err()
            .map(|e| e.to_string());
        assert!(e
            .unwrap_or_default()
            .contains("must be 1-3600; it is negative"));
        let p = Probe::try_parse_from(["p", "--seconds", " "])
            .ok()
            .map(|p| p.seconds);
        assert_eq!(p, Some(120));
        let e = Probe::try_parse_from(["p", "--foreman-env", "OPENTRAINING_A2A_TOKEN"]).err();
        let said = e.map(|e| e.to_string()).unwrap_or_default();
        assert!(said.contains("is never given to Foreman"), "{said}");
        let p = Probe::try_parse_from(["p", "--foreman-env", "A, B C", "--foreman-enabled", "yes"]);
        let p = p
            .ok()
            .map(|p| (p.foreman.foreman_env.0, p.foreman.foreman_enabled));
        assert_eq!(p, Some((vec!["A".into(), "B".into(), "C".into()], true)));
    }
}
