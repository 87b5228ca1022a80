//! The `argus-supervisor` command line.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "argus-supervisor",
    version,
    about = "Supervises long-running campaigns run by a remote A2A agent."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the simulated OpenTraining remote in the foreground (a local emulator to develop against).
    Sim {
        /// Address to listen on. Non-loopback addresses are refused unless --allow-non-loopback.
        #[arg(long, default_value = "127.0.0.1:8790")]
        listen: std::net::SocketAddr,
        /// A built-in scenario (happy, repair, input-required, long-noisy) or a TOML file.
        #[arg(long, default_value = "happy")]
        scenario: String,
        /// Require this token (Authorization: Bearer or X-API-KEY) on every call but the card.
        #[arg(long)]
        token: Option<String>,
        /// Allow listening beyond loopback (the sim is a test double: keep it off real networks).
        #[arg(long)]
        allow_non_loopback: bool,
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Sim {
            listen,
            scenario,
            token,
            allow_non_loopback,
        } => run_sim(listen, &scenario, token, allow_non_loopback),
        Command::Diagrams { check: true, dir } => match argus_supervisor::diagrams::check(&dir) {
            Ok(n) => {
                println!("diagrams up to date ({n} files in {})", dir.display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        },
        Command::Diagrams { check: false, dir } => match argus_supervisor::diagrams::write(&dir) {
            Ok(paths) => {
                for p in paths {
                    println!("wrote {}", p.display());
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        },
    }
}

fn run_sim(
    listen: std::net::SocketAddr,
    scenario: &str,
    token: Option<String>,
    allow_non_loopback: bool,
) -> ExitCode {
    use argus_supervisor::sim;
    if !listen.ip().is_loopback() && !allow_non_loopback {
        eprintln!("refusing to listen on {listen}: the sim is for loopback (pass --allow-non-loopback to override)");
        return ExitCode::from(2);
    }
    let scenario = match sim::Scenario::load(scenario) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let name = scenario.name.clone();
        let handle = match sim::start(listen, sim::SimOptions { scenario, token }).await {
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
