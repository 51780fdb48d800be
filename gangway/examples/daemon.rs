//! A minimal single-node host for gangway: "SSH and tmux, but fair" for a small lab.
//!
//! ```text
//! cargo run -p gangway --example daemon -- --node-json NODE.json [--jobs JOBS.jsonl]
//! ```
//!
//! `NODE.json` is the node entry `gangway inventory` prints. Jobs arrive as JSON lines (from
//! `--jobs FILE`, else stdin), each a JOB (docs/protocol.md) plus one field, `command`, a shell
//! command line. The loop runs on the real clock: it ticks on each event (a submission, a child
//! exiting) and at the scheduler's `next_wakeup_ms`. A `start` launches the job's command in its
//! own process group with `CUDA_VISIBLE_DEVICES` set to the decision's GPUs; `preempt` sends it
//! SIGTERM (its exit is then reported as `stopped`); `kill` (time limit, grace run out) and
//! `requeue` send SIGKILL. A child's exit is reported as `finished`, `completed` on status 0 and
//! `failed` otherwise. Each decision and rejection is printed as a line on stdout. The daemon
//! exits once its input has ended and no job is pending or running.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitCode};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use gangway::FinishOutcome;
use gangway::config::NodeConfig;
use gangway::{ClusterConfig, Decision, Event, JobSpec, Scheduler};

/// How often running children are checked for exit while nothing else happens.
const POLL: Duration = Duration::from_millis(20);

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("daemon: {message}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let (node_json, jobs) = parse_args()?;
    let text =
        std::fs::read_to_string(&node_json).map_err(|e| format!("cannot read {node_json}: {e}"))?;
    let node: NodeConfig = serde_json::from_str(&text).map_err(|e| format!("{node_json}: {e}"))?;
    let cluster = ClusterConfig {
        nodes: vec![node],
        ..ClusterConfig::default()
    };
    let scheduler = Scheduler::new(cluster).map_err(|e| format!("{node_json}: {e}"))?;
    let input: Box<dyn BufRead + Send> = match jobs {
        Some(path) => Box::new(BufReader::new(
            std::fs::File::open(&path).map_err(|e| format!("cannot open {path}: {e}"))?,
        )),
        None => Box::new(BufReader::new(std::io::stdin())),
    };
    Host::new(scheduler, read_lines(input)).serve();
    Ok(())
}

fn parse_args() -> Result<(String, Option<String>), String> {
    let mut node_json = None;
    let mut jobs = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let slot = match arg.as_str() {
            "--node-json" => &mut node_json,
            "--jobs" => &mut jobs,
            other => return Err(format!("unknown argument {other:?}")),
        };
        *slot = Some(args.next().ok_or_else(|| format!("{arg} needs a value"))?);
    }
    let node_json = node_json.ok_or("usage: daemon --node-json NODE.json [--jobs JOBS.jsonl]")?;
    Ok((node_json, jobs))
}

/// Input lines on a channel, so the loop can wait for a line or a deadline, whichever is first.
fn read_lines(input: Box<dyn BufRead + Send>) -> Receiver<String> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        for line in input.lines() {
            let Ok(line) = line else { break };
            if send.send(line).is_err() {
                break;
            }
        }
    });
    receive
}

/// A launched job's process.
struct Running {
    child: Child,
    /// Told to stop by a `preempt`: its exit is reported as `stopped`.
    preempted: bool,
}

struct Host {
    scheduler: Scheduler,
    input: Receiver<String>,
    input_open: bool,
    clock: Instant,
    /// Each submitted job's command, kept for restarts after a requeue.
    commands: BTreeMap<String, String>,
    children: BTreeMap<String, Running>,
    /// Events for the next tick that did not come from the input or a child's exit.
    queued: Vec<Event>,
    next_wakeup_ms: Option<u64>,
}

impl Host {
    fn new(scheduler: Scheduler, input: Receiver<String>) -> Host {
        Host {
            scheduler,
            input,
            input_open: true,
            clock: Instant::now(),
            commands: BTreeMap::new(),
            children: BTreeMap::new(),
            queued: Vec::new(),
            next_wakeup_ms: None,
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.clock.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn serve(&mut self) {
        loop {
            let mut events = std::mem::take(&mut self.queued);
            events.extend(self.exited_children());
            if self.input_open {
                match self.input.recv_timeout(POLL) {
                    Ok(line) => events.extend(self.submission(&line)),
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => self.input_open = false,
                }
            } else {
                std::thread::sleep(POLL);
            }
            let now = self.now_ms();
            let due = self.next_wakeup_ms.is_some_and(|t| t <= now);
            if !events.is_empty() || due {
                self.tick(now, events);
            }
            let state = self.scheduler.state();
            if !self.input_open && state.pending_count() == 0 && state.running_count() == 0 {
                return;
            }
        }
    }

    /// A job line: a JOB with a `command` field.
    fn submission(&mut self, line: &str) -> Option<Event> {
        if line.trim().is_empty() {
            return None;
        }
        let parsed = serde_json::from_str::<serde_json::Value>(line)
            .map_err(|e| e.to_string())
            .and_then(|mut value| {
                let command = value
                    .as_object_mut()
                    .and_then(|o| o.remove("command"))
                    .and_then(|c| c.as_str().map(str::to_string))
                    .ok_or("a job line needs a \"command\" string")?;
                let job: JobSpec = serde_json::from_value(value).map_err(|e| e.to_string())?;
                Ok((job, command))
            });
        match parsed {
            Ok((job, command)) => {
                self.commands.insert(job.id.clone(), command);
                Some(Event::Submit { job })
            }
            Err(e) => {
                println!("bad job line: {e}");
                None
            }
        }
    }

    /// `finished` or `stopped` for each child that has exited.
    fn exited_children(&mut self) -> Vec<Event> {
        let mut events = Vec::new();
        self.children.retain(|job, running| {
            let Ok(Some(status)) = running.child.try_wait() else {
                return true;
            };
            let job = job.clone();
            events.push(if running.preempted {
                println!("stopped {job}");
                Event::Stopped { job }
            } else {
                let outcome = if status.success() {
                    FinishOutcome::Completed
                } else {
                    FinishOutcome::Failed
                };
                println!("finished {job} {}", outcome_word(outcome));
                Event::Finished { job, outcome }
            });
            false
        });
        events
    }

    fn tick(&mut self, now: u64, events: Vec<Event>) {
        let outcome = match self.scheduler.tick(now, events) {
            Ok(outcome) => outcome,
            Err(e) => {
                println!("tick refused: {e}");
                return;
            }
        };
        for rejection in &outcome.rejected {
            println!("rejected {}", rejection.error);
        }
        for decision in outcome.decisions {
            self.act(decision);
        }
        self.next_wakeup_ms = outcome.next_wakeup_ms;
    }

    fn act(&mut self, decision: Decision) {
        match decision {
            Decision::Start { job, placement } => {
                let gpus: Vec<String> = placement
                    .iter()
                    .flat_map(|p| p.gpus.iter().map(u32::to_string))
                    .collect();
                self.launch(job, gpus.join(","));
            }
            Decision::Preempt { job, grace_ms, .. } => {
                if let Some(running) = self.children.get_mut(&job) {
                    signal(&running.child, "TERM");
                    running.preempted = true;
                }
                println!("preempt {job} grace_ms={grace_ms}");
            }
            Decision::Kill { job, reason } => {
                self.stop_now(&job);
                println!("killed {job} {}", json_word(&reason));
            }
            Decision::Requeue { job, reason } => {
                self.stop_now(&job);
                println!("requeued {job} {}", json_word(&reason));
            }
            Decision::Cancel { job, reason } => {
                println!("cancelled {job} {}", json_word(&reason));
            }
            // `Decision` is non-exhaustive: a later gangway may decide something this daemon
            // does not know. Say so rather than drop it silently.
            other => eprintln!("a decision this daemon does not act on: {other:?}"),
        }
    }

    fn launch(&mut self, job: String, gpus: String) {
        let command = self.commands.get(&job).cloned().unwrap_or_default();
        let spawned = Command::new("sh")
            .arg("-c")
            .arg(&command)
            .env("CUDA_VISIBLE_DEVICES", &gpus)
            .process_group(0)
            .spawn();
        match spawned {
            Ok(child) => {
                println!("started {job} gpus={gpus} pid={}", child.id());
                let running = Running {
                    child,
                    preempted: false,
                };
                self.children.insert(job, running);
            }
            Err(e) => {
                println!("cannot launch {job}: {e}");
                self.queued.push(Event::Finished {
                    job,
                    outcome: FinishOutcome::Failed,
                });
            }
        }
    }

    /// SIGKILL for a job the scheduler has already taken its resources from; its exit is not
    /// reported.
    fn stop_now(&mut self, job: &str) {
        if let Some(mut running) = self.children.remove(job) {
            signal(&running.child, "KILL");
            // Reaps the child; its status is of no interest any more.
            let _ = running.child.wait();
        }
    }
}

/// Sends a signal to a child's whole process group (the shell and what it started).
fn signal(child: &Child, name: &str) {
    let group = format!("-{}", child.id());
    let sent = Command::new("kill")
        .args(["-s", name, "--", &group])
        .status();
    if !sent.is_ok_and(|s| s.success()) {
        println!("could not send SIG{name} to process group {}", child.id());
    }
}

fn outcome_word(outcome: FinishOutcome) -> &'static str {
    match outcome {
        FinishOutcome::Completed => "completed",
        FinishOutcome::Failed => "failed",
    }
}

/// A reason as the wire protocol spells it (`time_limit`, `gpu_down`, …).
fn json_word(reason: &impl serde::Serialize) -> String {
    serde_json::to_value(reason)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
