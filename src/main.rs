//! The `argus-supervisor` command line.

mod demo;
mod probe;
mod state_root;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "argus-supervisor",
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("ARGUS_GIT_COMMIT"), ")"),
    about = "Supervises long-running campaigns run by a remote A2A agent."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The remote a command reads (and, for `qualify`, writes).
#[derive(clap::Args)]
struct RemoteArgs {
    /// The A2A base URL (defaults to OPENTRAINING_A2A_URL). Only its scheme, host and port are
    /// ever printed: its path may carry a token.
    #[arg(long, env = "OPENTRAINING_A2A_URL", hide_env_values = true)]
    url: String,
    /// The environment variable holding the token (never pass a token on the command line).
    #[arg(long, default_value = "OPENTRAINING_A2A_TOKEN")]
    token_env: String,
    /// Allow plain http:// to a loopback address.
    #[arg(long)]
    allow_insecure_loopback: bool,
    #[command(flatten)]
    reach: argus_supervisor_lib::settings::ReachArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Run the whole supervisor on the embedded simulated remote (the README's main job).
    Demo {
        /// State root (default: a fresh directory under the system temp dir, printed).
        #[arg(long)]
        home: Option<PathBuf>,
        /// After the mission, keep running and serve the panel (prints its URL and a token made for
        /// this run) until Ctrl-C.
        #[arg(long)]
        serve: bool,
        /// Where `--serve` listens (loopback only; port 0 picks a free one).
        #[arg(long, default_value = "127.0.0.1:8788", requires = "serve")]
        listen: std::net::SocketAddr,
    },
    /// Run the supervisor daemon. Every setting is a flag or its environment variable (listed
    /// below with its default); secrets come from the environment only.
    Serve {
        #[command(flatten)]
        args: Box<argus_supervisor_lib::daemon::ServeArgs>,
    },
    /// Operate campaigns through the API. The token is read from ARGUS_SUPERVISOR_API_TOKEN (never
    /// a flag). Exit codes: 0 done, 1 refused (or not done), 2 usage, 3 supervisor unreachable,
    /// 4 unauthorized, 5 not found.
    Campaigns {
        /// The supervisor's base URL: http://HOST:PORT, or unix:PATH for a daemon on a Unix socket.
        #[arg(
            long,
            env = "ARGUS_SUPERVISOR_URL",
            default_value = "http://127.0.0.1:8787",
            global = true
        )]
        url: String,
        /// Print the API's JSON answer.
        #[arg(long, global = true)]
        json: bool,
        #[command(subcommand)]
        command: argus_supervisor_lib::cli::CampaignsCommand,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    Completions { shell: clap_complete::Shell },
    /// Measure the runtime against the simulated remote in a separate process; print figures.
    Bench(BenchArgs),
    /// Discover a remote and report its capabilities and compatibility class (read-only calls only).
    Probe {
        #[command(flatten)]
        remote: RemoteArgs,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        root: argus_supervisor_lib::settings::StateRootArgs,
        #[command(flatten)]
        qualification: argus_supervisor_lib::settings::QualificationArgs,
        /// Foreman as serve would run it (probe asks it what it is).
        #[command(flatten)]
        foreman: argus_supervisor_lib::settings::ForemanArgs,
    },
    /// Prove what a live remote promises (fencing, idempotency, readback) and write the report.
    /// Read-only unless --write-campaign and --message name a dedicated test campaign and a
    /// harmless task. Exit codes: 0 qualified, 1 a check failed, 2 usage, 3 not qualified for
    /// writes (observer only, or the write phase not asked for).
    Qualify(QualifyCommand),
    /// Run the simulated OpenTraining remote in the foreground (a local emulator to develop against).
    Sim(SimArgs),
    /// `bench`'s own floor for a stream's memory, in a process of its own: bare SSE readers of a
    /// streaming remote's tasks; prints the KiB each holds.
    #[command(hide = true)]
    BenchFloorSse {
        #[arg(long)]
        url: String,
        #[arg(long)]
        streams: usize,
    },
    /// Write the generated state diagrams (Mermaid, DOT, SVG) from the explored machine.
    Diagrams {
        /// Do not write: exit non-zero and name the stale file when the committed files differ.
        #[arg(long)]
        check: bool,
        /// Where the diagrams live.
        #[arg(long, default_value = "diagrams")]
        dir: PathBuf,
    },
    /// Take a consistent snapshot of the state root: one archive (tar) with a manifest of sha256
    /// checksums, in the root's `backups/`. Online through the running daemon's API (`--url`),
    /// or offline when no daemon holds the root.
    Backup {
        #[command(flatten)]
        root: argus_supervisor_lib::settings::StateRootArgs,
        /// The running daemon's API (`http://HOST:PORT` or `unix:PATH`): it takes the snapshot.
        #[arg(long, env = "ARGUS_SUPERVISOR_URL", value_name = "URL")]
        url: Option<String>,
    },
    /// Restore a state root (empty or absent, unless --replace) from a backup archive, the daemon
    /// stopped: every file checked against the archive's manifest; a damaged or newer archive is
    /// refused.
    Restore {
        /// The archive `backup` wrote.
        #[arg(long, value_name = "FILE")]
        from: PathBuf,
        #[command(flatten)]
        root: argus_supervisor_lib::settings::StateRootArgs,
        /// Move a non-empty state root aside (`<DIR>.before-restore-<time>`) instead of refusing.
        #[arg(long)]
        replace: bool,
    },
    /// Drop the copies an upgrade kept of the documents it rewrote, once the upgraded build runs
    /// well (they age out by themselves after ARGUS_SUPERVISOR_UPGRADE_KEEP_DAYS).
    ConfirmUpgrade {
        #[command(flatten)]
        root: argus_supervisor_lib::settings::StateRootArgs,
    },
}

#[derive(clap::Args)]
struct BenchArgs {
    /// Campaign counts to measure (0: none, to run only the time-to-notice rows).
    #[arg(long, value_delimiter = ',', default_value = "1000,10000")]
    campaigns: Vec<usize>,
    /// Seconds of steady (unchanged) heartbeats to measure per count.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Compare every figure with its target; exit 1 when one is missed.
    #[arg(long)]
    check: bool,
    /// Poll tasks created on this A2A remote (plain non-blocking sends, read-only polls) instead
    /// of the bench's own simulated remote; the token comes from OPENTRAINING_A2A_TOKEN.
    #[arg(long)]
    remote: Option<String>,
    /// With --remote: allow plain http:// to a loopback address.
    #[arg(long)]
    allow_insecure_loopback: bool,
    /// With --remote: how it is reached (serve's settings).
    #[command(flatten)]
    reach: argus_supervisor_lib::settings::ReachArgs,
    /// Heartbeat in seconds during the measurement (default: max(1, campaigns / 2000), so the
    /// simulated remote keeps up); 120 measures the real cadence.
    #[arg(long)]
    heartbeat: Option<u64>,
    /// Share of the campaigns (0 to 1) that claim control and keep renewing their leases
    /// through the measurement (the bench's own simulated remote only).
    #[arg(long, default_value_t = 0.0)]
    controlling: f64,
    /// Drop the page cache before timing the recovery (needs root), so it reads from disk.
    #[arg(long)]
    cold: bool,
    /// Campaign counts of the time-to-notice measurement (10% of them live; 0: none).
    #[arg(long, value_delimiter = ',', default_value = "200")]
    notice: Vec<usize>,
    /// The heartbeat of the time-to-notice measurement, in seconds.
    #[arg(long, default_value_t = 120)]
    notice_heartbeat: u64,
    /// Hot polling's interval in the time-to-notice measurement, in seconds (0: off).
    #[arg(long, default_value_t = 2)]
    hot_poll: u64,
    /// The request budget of the time-to-notice measurement, requests per second.
    #[arg(long, default_value_t = 4.0)]
    budget: f64,
    /// Campaign counts of the time-to-notice measurement against a streaming remote (10% of
    /// them live, each followed by a stream; 0: none).
    #[arg(long, value_delimiter = ',', default_value = "200,2000")]
    notice_streaming: Vec<usize>,
}

#[derive(clap::Args)]
struct QualifyCommand {
    #[command(flatten)]
    remote: RemoteArgs,
    #[command(flatten)]
    qualify: argus_supervisor_lib::qualify::command::QualifyArgs,
}

#[derive(clap::Args)]
struct SimArgs {
    /// Address to listen on. Non-loopback addresses are refused unless --allow-non-loopback.
    #[arg(long, default_value = "127.0.0.1:8790")]
    listen: std::net::SocketAddr,
    /// A built-in scenario (happy, repair, input-required, long-noisy, repair-then-question) or a TOML file.
    #[arg(long, default_value = "happy")]
    scenario: String,
    /// Require this token (Authorization: Bearer or X-API-KEY) on every call but the card.
    #[arg(long)]
    token: Option<String>,
    /// Allow listening beyond loopback (the sim is a test double: keep it off real networks).
    #[arg(long)]
    allow_non_loopback: bool,
    /// Serve HTTPS with this PEM certificate chain (needs --tls-key). The URL printed names
    /// `localhost`.
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Play a remote without this extension operation (repeatable): absent from the card and
    /// answered -32601.
    #[arg(long, value_parser = ["claim_control", "read_control", "renew_control", "release_control", "intervene", "request_status", "cancel"])]
    omit: Vec<String>,
    /// Stream a live task's updates (the card says `capabilities.streaming`;
    /// `tasks/resubscribe` / `SubscribeToTask` answer with server-sent events).
    #[arg(long)]
    streaming: bool,
    /// The A2A dialect to serve (the scenario's, 0.3 unless it says).
    #[arg(long)]
    dialect: Option<argus_supervisor_lib::protocol::Dialect>,
}

/// This binary's build: its version and the commit it was built from (build.rs).
fn build() -> argus_supervisor_lib::deployment::Build {
    use argus_supervisor_lib::deployment::{BaseCommit, Build, FilesChanged};
    let base = Some(env!("ARGUS_GIT_BASE"))
        .filter(|b| !b.is_empty())
        .map(|b| BaseCommit {
            commit: b.into(),
            of: env!("ARGUS_GIT_BASE_REF").into(),
        });
    Build {
        version: env!("CARGO_PKG_VERSION").into(),
        commit: env!("ARGUS_GIT_COMMIT").into(),
        branch: Some(env!("ARGUS_GIT_BRANCH"))
            .filter(|b| !b.is_empty())
            .map(str::to_string),
        files: base.as_ref().map(|_| {
            FilesChanged::from_name_status(include_str!(concat!(env!("OUT_DIR"), "/git-files.txt")))
        }),
        base,
    }
}

/// The runtime `serve`, the demo and the bench run on: multi-threaded, its blocking pool capped.
/// A campaign's writes wait on the disk off the workers (`block_in_place`, which hands the worker
/// on through this pool); a burst of them — a thousand questions at once — then waits together,
/// and the file system commits them together. The cap keeps such a burst from starting a thread
/// per write (each thread kept for a while, with its stack and its allocator arena).
fn build_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(16)
        .build()
}

fn tokio_runtime() -> Option<tokio::runtime::Runtime> {
    match build_runtime() {
        Ok(r) => Some(r),
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            None
        }
    }
}

/// Logs on stderr, filtered by `--log-level`/`RUST_LOG` (tracing-subscriber's syntax); colour only
/// on a terminal; `--log-json` makes every line JSON.
fn init_logging(filter: &str, json: bool) -> Result<(), String> {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .map_err(|e| format!("invalid configuration: RUST_LOG (--log-level): {e}"))?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if json {
        builder.json().with_ansi(false).init();
    } else {
        builder.with_ansi(std::io::stderr().is_terminal()).init();
    }
    Ok(())
}

/// The command line, with each secret's help saying whether it is set (never its value).
fn command() -> clap::Command {
    Cli::command().mut_subcommand("serve", |serve| {
        // `[env: NAME]` only: a value (clap shows `NAME=` even when unset) is never printed.
        let serve = serve.mut_args(|a| a.hide_env_values(true));
        argus_supervisor_lib::daemon::SECRET_SETTINGS
            .iter()
            .fold(serve, |serve, (id, var)| {
                let state = if std::env::var_os(var).is_some_and(|v| !v.is_empty()) {
                    "set"
                } else {
                    "unset"
                };
                serve.mut_arg(*id, |a| {
                    let help = a.get_help().map(ToString::to_string).unwrap_or_default();
                    a.help(format!("{help} [now: {state}]"))
                })
            })
    })
}

fn main() -> ExitCode {
    let matches = command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    match cli.command {
        Command::Demo {
            home,
            serve,
            listen,
        } => run_demo(home, serve.then_some(listen)),
        Command::Serve { args } => run_serve(&matches, &args),
        Command::Backup { root, url } => state_root::backup(&root.home, url.as_deref()),
        Command::Restore {
            from,
            root,
            replace,
        } => state_root::restore(&from, &root.home, replace),
        Command::ConfirmUpgrade { root } => state_root::confirm_upgrade(&root.home),
        Command::Completions { shell } => {
            use std::io::Write;
            match std::io::stdout().write_all(completion_script(shell).as_bytes()) {
                Ok(()) => ExitCode::SUCCESS,
                // A closed pipe (`| head`) is the reader's choice, not a failure to report.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("cannot write the completion script: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Campaigns { url, json, command } => campaigns(&url, command, json),
        Command::Bench(args) => run_bench(args),
        Command::Probe {
            remote,
            json,
            root,
            qualification,
            foreman,
        } => probe::run(
            remote,
            json,
            &root.home,
            qualification.qualification_max_age_days,
            &foreman,
        ),
        Command::Qualify(args) => run_qualify(args),
        Command::Sim(args) => sim(args),
        Command::Diagrams { check, dir } => diagrams(check, &dir),
        Command::BenchFloorSse { url, streams } => {
            let Some(rt) = tokio_runtime() else {
                return ExitCode::FAILURE;
            };
            match rt.block_on(argus_bench::bare_stream_reader(&url, streams)) {
                Ok(kib) => {
                    println!("{kib}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("{e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

fn run_demo(home: Option<PathBuf>, serve: Option<std::net::SocketAddr>) -> ExitCode {
    let Some(rt) = tokio_runtime() else {
        return ExitCode::FAILURE;
    };
    match rt.block_on(demo::run(home, serve)) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("\ndemo failed: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run_serve(
    matches: &clap::ArgMatches,
    args: &argus_supervisor_lib::daemon::ServeArgs,
) -> ExitCode {
    use argus_supervisor_lib::daemon;
    let serve = matches.subcommand_matches("serve");
    let given = |id: &str| {
        serve.and_then(|m| m.value_source(id)) == Some(clap::parser::ValueSource::CommandLine)
    };
    // A secret on the command line would be visible to every user of the machine.
    for (id, var) in daemon::SECRET_SETTINGS {
        if given(id) {
            eprintln!("invalid configuration: {var}: secrets are read from the environment only, never from a flag");
            return ExitCode::from(2);
        }
    }
    let mut config = match daemon::ServeConfig::from_args(args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    config.build = build();
    if config.backend.is_some() {
        use argus_supervisor_lib::deployment::BackendSource;
        config.backend_source = if given("backend") {
            BackendSource::Flag
        } else {
            BackendSource::Environment
        };
    }
    if let Err(e) = init_logging(&args.log_level, args.log_json) {
        eprintln!("{e}");
        return ExitCode::from(2);
    }
    let Some(rt) = tokio_runtime() else {
        return ExitCode::FAILURE;
    };
    match rt.block_on(daemon::serve(config)) {
        Ok(()) => ExitCode::SUCCESS,
        // Another supervisor holds the state root: a configuration error, like a bad
        // variable (exit 2), so a restart policy does not loop on it silently.
        Err(e @ daemon::ServeError::RootLocked(_)) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
        // A newer build's root: refused untouched; a restart policy must not loop on it.
        Err(e @ daemon::ServeError::NewerRoot(_)) => {
            eprintln!("{e}");
            ExitCode::from(6)
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn campaigns(
    url: &str,
    command: argus_supervisor_lib::cli::CampaignsCommand,
    json: bool,
) -> ExitCode {
    let Some(rt) = tokio_runtime() else {
        return ExitCode::FAILURE;
    };
    let (text, exit) = rt.block_on(argus_supervisor_lib::cli::run(url, command, json));
    if exit == argus_supervisor_lib::cli::Exit::Done {
        print!("{text}");
        if json {
            println!();
        }
    } else if json {
        println!("{text}");
    } else {
        eprintln!("{text}");
    }
    ExitCode::from(exit as u8)
}

fn run_bench(a: BenchArgs) -> ExitCode {
    let remote = match a.remote.map(|url| a.reach.http(url)) {
        None => None,
        Some(Ok(mut c)) => {
            c.token = argus_supervisor_lib::security::Secret::from_env("OPENTRAINING_A2A_TOKEN");
            c.allow_insecure_loopback = a.allow_insecure_loopback;
            Some(c)
        }
        Some(Err(e)) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match build_runtime() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let options = argus_bench::Options {
        counts: a.campaigns,
        seconds: a.seconds,
        check: a.check,
        remote,
        heartbeat: a.heartbeat,
        controlling: a.controlling,
        cold: a.cold,
        notice: a.notice,
        notice_streaming: a.notice_streaming,
        notice_settings: argus_bench::NoticeSettings {
            heartbeat: a.notice_heartbeat,
            hot_poll: a.hot_poll,
            budget_rps: a.budget,
            streaming: false,
        },
    };
    match runtime.block_on(argus_bench::run(options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench failed: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run_qualify(a: QualifyCommand) -> ExitCode {
    let Some(rt) = tokio_runtime() else {
        return ExitCode::FAILURE;
    };
    let http = match remote_config(a.remote) {
        Ok(c) => c,
        Err(code) => return code,
    };
    rt.block_on(argus_supervisor_lib::qualify::command::run(
        http,
        a.qualify,
        build(),
    ))
}

fn sim(a: SimArgs) -> ExitCode {
    let tls = match (a.tls_cert, a.tls_key) {
        (Some(cert), Some(key)) => match argus_sim::SimTls::from_files(&cert, &key) {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("cannot read the TLS certificate or key: {e}");
                return ExitCode::from(2);
            }
        },
        _ => None,
    };
    let (omit, streaming, dialect) = (a.omit, a.streaming, a.dialect);
    let shape = move |s: &mut argus_sim::Scenario| {
        s.omit.extend(omit);
        s.streaming |= streaming;
        if let Some(d) = dialect {
            s.dialect = d;
        }
    };
    run_sim(
        a.listen,
        &a.scenario,
        shape,
        a.token,
        a.allow_non_loopback,
        tls,
    )
}

fn diagrams(check: bool, dir: &std::path::Path) -> ExitCode {
    use argus_supervisor_lib::diagrams;
    let done = if check {
        diagrams::check(dir)
            .map(|n| println!("diagrams up to date ({n} files in {})", dir.display()))
    } else {
        diagrams::write(dir).map(|paths| {
            for p in paths {
                println!("wrote {}", p.display());
            }
        })
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn run_sim(
    listen: std::net::SocketAddr,
    scenario: &str,
    shape: impl FnOnce(&mut argus_sim::Scenario),
    token: Option<String>,
    allow_non_loopback: bool,
    tls: Option<argus_sim::SimTls>,
) -> ExitCode {
    use argus_sim as sim;
    if !listen.ip().is_loopback() && !allow_non_loopback {
        eprintln!("refusing to listen on {listen}: the sim is for loopback (pass --allow-non-loopback to override)");
        return ExitCode::from(2);
    }
    let mut scenario = match sim::Scenario::load(scenario) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    shape(&mut scenario);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let name = scenario.name.clone();
        let handle = match sim::start(
            listen,
            sim::SimOptions {
                scenario,
                token,
                tls,
            },
        )
        .await
        {
            Ok(h) => h,
            Err(e) => {
                eprintln!("cannot listen on {listen}: {e}");
                return ExitCode::FAILURE;
            }
        };
        println!("{}", handle.url());
        eprintln!("simulated OpenTraining serving scenario {name:?}; Ctrl-C stops it");
        let _ = tokio::signal::ctrl_c().await;
        match handle.stop().await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        }
    })
}

/// The remote as `probe` and `qualify` reach it: the URL, trust and zone as serve reads them, the
/// token from the variable `token_env` names. An unusable trust setting is said here (exit 2).
fn remote_config(remote: RemoteArgs) -> Result<argus_supervisor_lib::a2a::HttpConfig, ExitCode> {
    let mut config = remote.reach.http(remote.url).map_err(|e| {
        eprintln!("{e}");
        ExitCode::from(2)
    })?;
    config.token = argus_supervisor_lib::security::Secret::from_env(&remote.token_env);
    config.allow_insecure_loopback = remote.allow_insecure_loopback;
    Ok(config)
}

/// The shell's completion script. clap_complete 4.6's bash script completes nothing past the first
/// word of a binary whose name has a hyphen (clap-rs/clap#6421, unfixed in 4.6.12): its loop
/// builds the state `argus__supervisor__subcmd__campaigns` while its case arms spell it
/// `argus__subcmd__supervisor__subcmd__campaigns`. The arms are respelled as the loop builds
/// them; the test drives bash's own completion, so an upstream change to either spelling fails it.
fn completion_script(shell: clap_complete::Shell) -> String {
    let mut script = vec![];
    clap_complete::generate(shell, &mut command(), "argus-supervisor", &mut script);
    let script = String::from_utf8_lossy(&script).into_owned();
    match shell {
        clap_complete::Shell::Bash => {
            script.replace("argus__subcmd__supervisor", "argus__supervisor")
        }
        _ => script,
    }
}

#[cfg(test)]
mod tests {
    /// clap's own checks of the whole command line (unique names and groups across flattened
    /// arguments), which only a debug build of the subcommand a run takes would otherwise trip:
    /// two flattened structs of one name made `qualify` panic at its first parse.
    #[test]
    fn the_command_line_passes_claps_own_checks() {
        super::command().debug_assert();
    }
}
