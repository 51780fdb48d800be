//! The `gangway` command: `simulate` (replay a workload under several policies), `shim` (the
//! JSON-lines protocol on stdin/stdout), `validate` (check a CLUSTER file), `inventory` (the
//! local node's GPUs as a CLUSTER node entry), and `explain` and `queue` (the pending jobs as
//! an `squeue --start`-like table).

mod inventory;
mod queue;
mod simulate;
mod sweep;
mod trace;

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use gangway::protocol::{DEFAULT_MAX_LINE_BYTES, ServeEnd, ServeLimits, Shim};
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
    /// Replay a workload (the built-in team one, or a trace) and compare policies.
    Simulate(Box<simulate::SimulateArgs>),
    /// Serve the JSON-lines protocol (docs/protocol.md) on stdin/stdout.
    ///
    /// Every non-blank line gets exactly one response line, whatever its bytes: a line that is
    /// not UTF-8 is refused with kind `parse`, one longer than --max-line-bytes with kind
    /// `line_too_long`, and the scheduler keeps its state.
    ///
    /// Exit status: 0 at the end of the input, 0 (quietly) when the reader of standard output
    /// closes it, 1 with a message on standard error on any other read or write error, 2 when
    /// the --config file cannot be read or is invalid.
    Shim {
        /// Configure from this CLUSTER file instead of a first `configure` request.
        #[arg(long)]
        config: Option<PathBuf>,
        /// The longest request line, in bytes without its line end; a longer line is skipped
        /// unread and refused with kind `line_too_long`. The default, 4 GiB, is about five
        /// times the `restore` of a snapshot with a million pending jobs.
        #[arg(long, default_value_t = DEFAULT_MAX_LINE_BYTES)]
        max_line_bytes: u64,
    },
    /// Print the pending jobs of a saved scheduler state as `squeue --start` does: place in
    /// the queue (pending jobs only, from 1), job, user, account, reason, estimated start from
    /// the snapshot's last tick, and the jobs ahead.
    ///
    /// Exit status: 0, or 1 with a message when the snapshot cannot be read or restored.
    Explain {
        /// A snapshot as the shim's `snapshot` op writes it: the response line
        /// `{"ok":true,"state":S}` or the state S alone.
        #[arg(long, value_name = "FILE")]
        snapshot: PathBuf,
    },
    /// Print the pending jobs of the shim's `explain` response, read on standard input (the
    /// last line with "pending": a whole shim session may be piped), as `explain --snapshot`
    /// does. USER and ACCOUNT are the response's own; for a response without them (an older
    /// gangway's), the submits of the shim's requests (--requests, or request lines on
    /// standard input) name them, else they show `-`.
    ///
    /// Exit status: 0, or 1 with a message when no explain response can be read.
    Queue {
        /// The time estimated starts count from (START: `in 3h 50m`), in ms. Default: the
        /// `at_ms` of the last tick response before the explain response; without one,
        /// starts show as `at T ms`.
        #[arg(long, value_name = "MS")]
        now_ms: Option<u64>,
        /// The requests the shim was given (JSON lines), for the users and accounts of their
        /// submits.
        #[arg(long, value_name = "FILE")]
        requests: Option<PathBuf>,
    },
    /// Check a CLUSTER file and print what is wrong with it, if anything.
    Validate {
        /// The CLUSTER JSON file.
        file: PathBuf,
    },
    /// Print this machine's node entry for a CLUSTER file, from the NVIDIA driver (feature
    /// `nvml`). Exits 2 when NVML is not available, 1 on other failures.
    Inventory {
        /// Read the devices from a recorded probe fixture instead of the driver (then --name,
        /// --cpus and --memory-mib are required).
        #[arg(long)]
        fixture: Option<PathBuf>,
        /// Node name (default: the host name).
        #[arg(long)]
        name: Option<String>,
        /// Cpus (default: the logical cpus of this machine).
        #[arg(long)]
        cpus: Option<u32>,
        /// Memory in MiB (default: this machine's total memory).
        #[arg(long)]
        memory_mib: Option<u64>,
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
        Command::Shim {
            config,
            max_line_bytes,
        } => shim(
            config,
            ServeLimits::default().with_max_line_bytes(max_line_bytes),
        ),
        Command::Inventory {
            fixture,
            name,
            cpus,
            memory_mib,
        } => inventory::run(
            fixture.as_deref(),
            inventory::HostOverrides {
                name,
                cpus,
                memory_mib,
            },
        ),
        Command::Explain { snapshot } => printed(queue::from_snapshot(&snapshot)),
        Command::Queue { now_ms, requests } => printed(queue::from_explain(
            io::stdin().lock(),
            now_ms,
            requests.as_deref(),
        )),
        Command::Validate { file } => match load_config(&file)
            .and_then(|_| print_stdout(&format!("{}: valid\n", file.display())))
        {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("{message}");
                ExitCode::from(1)
            }
        },
    }
}

/// Prints a command's text; exit status 1 with the message on standard error when it failed.
fn printed(result: Result<String, String>) -> ExitCode {
    match result.and_then(|text| print_stdout(&text)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::from(1)
        }
    }
}

fn load_config(path: &Path) -> Result<Scheduler, String> {
    let config = read_config(path)?;
    Scheduler::new(config).map_err(|e| format!("{}: invalid_config: {e}", path.display()))
}

/// Writes `text` to standard output. A reader that went away (`gangway simulate | head`) is not
/// an error: the rest of the output is dropped quietly, as Unix tools do; any other failure is.
fn print_stdout(text: &str) -> Result<(), String> {
    match io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(format!("cannot write to standard output: {e}"))
        }
        _ => Ok(()),
    }
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

fn shim(config: Option<PathBuf>, limits: ServeLimits) -> ExitCode {
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
    match shim.serve(io::stdin().lock(), io::stdout().lock(), limits) {
        Ok(ServeEnd::EndOfInput | ServeEnd::OutputClosed) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gangway shim: {e}");
            ExitCode::from(1)
        }
    }
}
