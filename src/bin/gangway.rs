//! The `gangway` command: `simulate` (replay a workload under several policies), `shim` (the
//! JSON-lines protocol on stdin/stdout) and `validate` (check a CLUSTER file).

#[path = "gangway/simulate.rs"]
mod simulate;

use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use gangway::protocol::Shim;
use gangway::{ClusterConfig, Scheduler};

#[derive(Parser)]
#[command(
    name = "gangway",
    version,
    about = "GPU-cluster scheduling policy as a library"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Replay a workload (the built-in GPU-ML one, or a trace) and compare policies.
    Simulate(simulate::SimulateArgs),
    /// Serve PROTOCOL.md's JSON-lines protocol on stdin/stdout.
    Shim {
        /// Configure from this CLUSTER file instead of a first `configure` request.
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Check a CLUSTER file and print what is wrong with it, if anything.
    Validate {
        /// The CLUSTER JSON file.
        file: PathBuf,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Simulate(args) => match simulate::simulate(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("{message}");
                ExitCode::from(1)
            }
        },
        Command::Shim { config } => shim(config),
        Command::Validate { file } => match load_config(&file) {
            Ok(_) => {
                println!("{}: valid", file.display());
                ExitCode::SUCCESS
            }
            Err(message) => {
                eprintln!("{message}");
                ExitCode::from(1)
            }
        },
    }
}

fn load_config(path: &Path) -> Result<Scheduler, String> {
    let config = read_config(path)?;
    Scheduler::new(config).map_err(|e| format!("{}: invalid_config: {e}", path.display()))
}

/// Reads a CLUSTER file; the error names the file and the field that is wrong.
fn read_config(path: &Path) -> Result<ClusterConfig, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut de = serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        format!(
            "{}: invalid_config: {}: {}",
            path.display(),
            e.path(),
            e.inner()
        )
    })
}

fn shim(config: Option<PathBuf>) -> ExitCode {
    let mut shim = match config {
        None => Shim::default(),
        Some(path) => match load_config(&path) {
            Ok(scheduler) => Shim::with_scheduler(scheduler),
            Err(message) => {
                eprintln!("{message}");
                return ExitCode::from(2);
            }
        },
    };
    let stdin = io::stdin();
    let mut stdout = io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let response = shim.handle_line(&line);
        if writeln!(stdout, "{response}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            break;
        }
    }
    ExitCode::SUCCESS
}
