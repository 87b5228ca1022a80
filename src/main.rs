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
