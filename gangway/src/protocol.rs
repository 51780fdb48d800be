//! The JSON-lines wire protocol (docs/protocol.md): one request object per line in, exactly one
//! response object per line out. [`Shim`] is the whole protocol: [`Shim::handle_line`] answers
//! one decoded line, [`Shim::serve`] reads lines from any byte stream and writes the responses
//! (`gangway shim` is `serve` on stdin and stdout). `serve` answers every non-blank line of any
//! bytes: a line that is not UTF-8 gets a `parse` refusal naming the offset of its first invalid
//! byte, a line over [`ServeLimits::max_line_bytes`] a `line_too_long` refusal, and the scheduler
//! keeps its state.
//!
//! ```
//! use gangway::protocol::Shim;
//! let mut shim = Shim::default();
//! let ok = shim.handle_line(r#"{"op":"configure","cluster":{"nodes":[{"name":"n1","cpus":4}]}}"#);
//! assert_eq!(ok, r#"{"ok":true,"protocol":1}"#);
//! let out = shim.handle_line(r#"{"op":"tick","at_ms":0,"events":[{"type":"submit","job":{"id":"a","time_limit_ms":1000,"groups":[{"count":2}]}}]}"#);
//! assert!(out.contains(r#""type":"start","job":"a""#));
//! let bad = shim.handle_line("not json");
//! assert!(bad.starts_with(r#"{"ok":false,"error":{"kind":"parse""#));
//! ```
//!
//! `{"op":"reconfigure","cluster":CLUSTER}` replaces partitions, cohorts, queues, accounts, QoS
//! and policy of a configured scheduler while keeping its nodes and jobs
//! ([`Scheduler::reconfigure`]); it answers `{"ok":true}`, or `invalid_config` and changes
//! nothing.
//!
//! ```
//! use gangway::protocol::Shim;
//! let mut shim = Shim::default();
//! shim.handle_line(r#"{"op":"configure","cluster":{"nodes":[{"name":"n1","cpus":4}]}}"#);
//! let ok = shim.handle_line(r#"{"op":"reconfigure","cluster":{"nodes":[],
//!     "policy":{"priority":{"weights":{"age":10}}}}}"#);
//! assert_eq!(ok, r#"{"ok":true}"#);
//! let bad = shim.handle_line(r#"{"op":"reconfigure","cluster":{"nodes":[],"queues":[{"name":""}]}}"#);
//! assert!(bad.starts_with(r#"{"ok":false,"error":{"kind":"invalid_config","message":"cluster.queues[0].name"#), "{bad}");
//! ```
//!
//! `explain` also takes an optional `"detail": true`, which adds `"shares"` (the
//! `sshare`-like report, [`Scheduler::share_report`]) and `"priorities"` (the `sprio`-like
//! breakdown, [`Scheduler::priorities`]) to the response, and `"admission_usage"` (each
//! tenant's admission-fair-sharing usage per queue, [`Scheduler::admission_usage`]) when a
//! queue turns that on; without it the response has only `pending` and `running`.
//!
//! `{"op":"what_if","job":JOB}` answers when and where the job would start if submitted now
//! ([`Scheduler::what_if`]), changing nothing: `{"ok":true,"start_ms":T,"placement":[…]}`
//! (`start_ms` null when it waits for something other than resources); a job its `submit`
//! would reject answers `{"ok":false,"error":{"kind":…,"message":…}}` with the event error's
//! kind.
//!
//! ```
//! use gangway::protocol::Shim;
//! let mut shim = Shim::default();
//! shim.handle_line(r#"{"op":"configure","cluster":{"nodes":[{"name":"n1","cpus":2}]}}"#);
//! shim.handle_line(r#"{"op":"tick","at_ms":0,"events":[{"type":"submit","job":{"id":"a","time_limit_ms":1000,"groups":[{"count":2}]}}]}"#);
//! let answer = shim.handle_line(r#"{"op":"what_if","job":{"id":"b","time_limit_ms":10,"groups":[{"count":1}]}}"#);
//! assert_eq!(answer, r#"{"ok":true,"start_ms":1000,"placement":[{"group":0,"node":"n1","tasks":1,"gpus":[]}]}"#);
//! let bad = shim.handle_line(r#"{"op":"what_if","job":{"id":"a","time_limit_ms":10,"groups":[{"count":1}]}}"#);
//! assert!(bad.starts_with(r#"{"ok":false,"error":{"kind":"duplicate_job""#), "{bad}");
//! ```
//!
//! ```
//! use gangway::protocol::Shim;
//! let mut shim = Shim::default();
//! shim.handle_line(r#"{"op":"configure","cluster":{"nodes":[{"name":"n1","cpus":1}],
//!     "accounts":[{"name":"ml"}],"policy":{"priority":{"weights":{"fairshare":100}}}}}"#);
//! shim.handle_line(r#"{"op":"tick","at_ms":0,"events":[
//!     {"type":"submit","job":{"id":"a","account":"ml","time_limit_ms":1000,"groups":[{"count":1}]}},
//!     {"type":"submit","job":{"id":"b","account":"ml","time_limit_ms":1000,"groups":[{"count":1}]}}]}"#);
//! let plain = shim.handle_line(r#"{"op":"explain"}"#);
//! assert!(!plain.contains("shares") && !plain.contains("priorities"));
//! let detailed = shim.handle_line(r#"{"op":"explain","detail":true}"#);
//! assert!(detailed.contains(r#""shares":[{"account":"ml","user":null"#), "{detailed}");
//! assert!(detailed.contains(r#""priorities":[{"job":"b","base":0,"factors":{"age":0.0,"fairshare":1.0"#), "{detailed}");
//! ```

mod serve;

pub use serve::{DEFAULT_MAX_LINE_BYTES, ServeEnd, ServeError, ServeLimits};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::ClusterConfig;
use crate::decision::{Decision, PendingInfo, Rejection, RunningInfo};
use crate::error::ConfigError;
use crate::error::{ErrorKind, RefusalKind, TickError};
use crate::event::Event;
use crate::fairshare::{AdmissionUsageRow, ShareRow};
use crate::policy::Profile;
use crate::quota::FairShareRow;
use crate::scheduler::{JobPriority, Scheduler, Snapshot, WhatIf};

/// The protocol version `configure` answers with.
pub const PROTOCOL_VERSION: u32 = 1;

/// A request line's fields by its `op`. Parsed from `{OP: {the other fields}}` (see
/// [`parse_request`]): an externally tagged enum keeps the path of a bad field, which serde loses
/// inside an internally tagged one.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum Request {
    Configure {
        cluster: Value,
    },
    Reconfigure {
        cluster: Value,
    },
    Tick {
        at_ms: u64,
        events: Vec<Value>,
    },
    Explain {
        at_ms: Option<u64>,
        #[serde(default)]
        detail: bool,
    },
    Snapshot {},
    Restore {
        state: Value,
    },
    WhatIf {
        job: Value,
    },
}

/// The error object of a refused request or a rejected event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct WireError {
    /// A [`RefusalKind`] (`parse`, `not_configured`, `invalid_config`, `time_went_backwards`,
    /// `invalid_state`, `line_too_long`), or an event [`ErrorKind`] (a refused `what_if`, a
    /// rejected event).
    pub kind: String,
    /// What was wrong and where.
    pub message: String,
    /// The path of the field the error is about, when it is about one field of the request
    /// as sent (`at_ms`, `cluster.nodes[1].gpus.count`, `events[3].job.groups[0].cpus`,
    /// `job.time_limit_ms`, `state.version`): one that did not parse (ill-typed, unknown,
    /// missing, a number its type does not hold), a CLUSTER field the configuration refused, a
    /// tick's or explain's `at_ms`. `None` when the error is about the state or the request
    /// as a whole (docs/protocol.md, "Errors"). Written only when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl WireError {
    /// An error of `kind` about the field at `path` (`None`: about no one field).
    pub fn new(kind: &str, message: impl Into<String>, path: Option<String>) -> Self {
        WireError {
            kind: kind.to_string(),
            message: message.into(),
            path,
        }
    }
}

/// A rejected event of a tick's response: [`Rejection`] with the error's `path` when the event
/// was malformed (`events[3].job.groups[0].cpus`; `events[3]` where serde does not say which
/// field of an event other than `submit` and `node_add`).
#[derive(Serialize)]
struct WireRejection {
    index: usize,
    error: WireError,
}

impl From<Rejection> for WireRejection {
    fn from(r: Rejection) -> Self {
        WireRejection {
            index: r.index,
            error: WireError::new(r.error.kind.as_str(), r.error.message, None),
        }
    }
}

#[derive(Serialize)]
struct Refused {
    ok: bool,
    error: WireError,
}

#[derive(Serialize)]
struct Configured {
    ok: bool,
    protocol: u32,
}

#[derive(Serialize)]
struct Ticked {
    ok: bool,
    at_ms: u64,
    decisions: Vec<Decision>,
    rejected: Vec<WireRejection>,
    next_wakeup_ms: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    plugin_faults: Vec<crate::policy::PluginFault>,
}

#[derive(Serialize)]
struct Explained {
    ok: bool,
    pending: Vec<PendingInfo>,
    running: Vec<RunningInfo>,
    /// With `"detail": true`: the `sshare`-like fair-share report.
    #[serde(skip_serializing_if = "Option::is_none")]
    shares: Option<Vec<ShareRow>>,
    /// With `"detail": true`: the `sprio`-like priority breakdown of pending jobs.
    #[serde(skip_serializing_if = "Option::is_none")]
    priorities: Option<Vec<JobPriority>>,
    /// With `"detail": true` and a queue with admission fair sharing: its tenants' usage.
    #[serde(skip_serializing_if = "Option::is_none")]
    admission_usage: Option<Vec<AdmissionUsageRow>>,
    /// With fair sharing between queues on: each queue's share value (and with `"detail":
    /// true` each cohort's of those trees).
    #[serde(skip_serializing_if = "Option::is_none")]
    fair_sharing: Option<Vec<FairShareRow>>,
}

#[derive(Serialize)]
struct SnapshotTaken {
    ok: bool,
    state: Snapshot,
}

#[derive(Serialize)]
struct Answered {
    ok: bool,
    #[serde(flatten)]
    answer: WhatIf,
}

#[derive(Serialize)]
struct Done {
    ok: bool,
}

/// The response object of a request the shim answered with `"ok": true`, ready to serialize
/// (as a line by [`Shim::handle_line`], or into another data model by an embedding host such as
/// the Python bindings).
pub struct Response(Body);

#[derive(Serialize)]
#[serde(untagged)]
enum Body {
    Configured(Configured),
    Ticked(Ticked),
    Explained(Explained),
    SnapshotTaken(Box<SnapshotTaken>),
    Answered(Answered),
    Done(Done),
}

impl Serialize for Response {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl Response {
    /// The response as one JSON line (without newline), as `gangway shim` writes it.
    pub fn to_json(&self) -> String {
        to_json(self)
    }
}

impl std::fmt::Debug for Response {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_json())
    }
}

/// Builds the profile of every scheduler a shim makes (on `configure` and `restore`) from the
/// configuration: for a host whose plug-ins are not in `policy.plugins` (the Python bindings'
/// Python hooks). See [`Shim::with_profile_maker`].
pub type ProfileMaker = Box<dyn Fn(&ClusterConfig) -> Result<Profile, ConfigError> + Send + Sync>;

/// The protocol state machine: not configured, then one scheduler.
#[derive(Default)]
pub struct Shim {
    scheduler: Option<Scheduler>,
    profile_maker: Option<ProfileMaker>,
}

impl Shim {
    /// A shim already configured with `scheduler` (`gangway shim --config FILE`).
    pub fn with_scheduler(scheduler: Scheduler) -> Self {
        Shim {
            scheduler: Some(scheduler),
            profile_maker: None,
        }
    }

    /// A shim whose `configure` builds its scheduler with the profile `maker` returns for the
    /// configuration ([`Scheduler::with_profile`]) and whose `restore` restores with it
    /// ([`Scheduler::restore_with_profile`]); a `reconfigure` keeps the profile. An error of
    /// the maker is an `invalid_config` refusal (`invalid_state` on `restore`).
    ///
    /// ```
    /// use gangway::policy::{builtin::ShortestFirst, Profile};
    /// use gangway::protocol::Shim;
    /// let mut shim = Shim::with_profile_maker(Box::new(|_| {
    ///     Ok(Profile::builder().plugin(ShortestFirst).build().expect("a valid profile"))
    /// }));
    /// shim.handle_line(r#"{"op":"configure","cluster":{"nodes":[{"name":"n1","cpus":1}]}}"#);
    /// let names: Vec<&str> = shim.scheduler().unwrap().profile().plugin_names().collect();
    /// assert_eq!(names, ["shortest_first"]);
    /// ```
    pub fn with_profile_maker(maker: ProfileMaker) -> Self {
        Shim {
            scheduler: None,
            profile_maker: Some(maker),
        }
    }

    /// A shim whose clients may name `registry`'s plug-ins in their configuration's
    /// `policy.plugins` (a host's own beside the built-ins): `configure` and `restore` build
    /// the profile with [`Registry::profile_for`](crate::policy::Registry::profile_for), and a
    /// name it does not know is refused with `invalid_config` as in a plain shim. Serve it as
    /// any shim ([`Shim::serve`]).
    ///
    /// ```
    /// use gangway::policy::{FnPlugin, NoParams, Registry};
    /// use gangway::protocol::{ServeLimits, Shim};
    /// let mut registry = Registry::builtin();
    /// registry.register("no_one", |_: NoParams| {
    ///     Ok(FnPlugin::new("no_one").filter_node(|_, _, _, _| Err("closed".into())))
    /// }).unwrap();
    /// let input = br#"{"op":"configure","cluster":{"nodes":[{"name":"n1","cpus":1}],"policy":{"plugins":[{"name":"no_one"}]}}}
    /// {"op":"tick","at_ms":0,"events":[{"type":"submit","job":{"id":"a","time_limit_ms":10,"groups":[{"count":1,"cpus":1}]}}]}
    /// "#;
    /// let mut out = Vec::new();
    /// Shim::with_registry(registry).serve(&input[..], &mut out, ServeLimits::default()).unwrap();
    /// let out = String::from_utf8(out).unwrap();
    /// let lines: Vec<&str> = out.lines().collect();
    /// assert_eq!(lines[0], r#"{"ok":true,"protocol":1}"#);
    /// assert!(lines[1].contains(r#""decisions":[]"#), "{}", lines[1]);
    /// ```
    pub fn with_registry(registry: crate::policy::Registry) -> Self {
        Shim::with_profile_maker(Box::new(move |config| registry.profile_for(config)))
    }

    /// The scheduler, once configured.
    pub fn scheduler(&self) -> Option<&Scheduler> {
        self.scheduler.as_ref()
    }

    /// Handles one request line and returns exactly one response line (without newline).
    pub fn handle_line(&mut self, line: &str) -> String {
        let answer = serde_json::from_str(line)
            .map_err(|e| refused(RefusalKind::Parse, format!("the line is not JSON: {e}")))
            .and_then(|value| self.handle_request(value));
        match answer {
            Ok(response) => response.to_json(),
            Err(error) => refusal(error),
        }
    }

    /// Handles one decoded request object (`{"op":…,…}`): the response object, or the error
    /// of the `{"ok":false,"error":…}` refusal [`Shim::handle_line`] would answer. A refused
    /// request changes nothing. A host that keeps requests and responses in its own data
    /// model (the Python bindings) uses this instead of [`Shim::handle_line`], with the same
    /// handling and the same errors.
    ///
    /// ```
    /// use gangway::protocol::Shim;
    /// use serde_json::json;
    /// let mut shim = Shim::default();
    /// let error = shim.handle_request(json!({"op": "explain"})).unwrap_err();
    /// assert_eq!(error.kind, "not_configured");
    /// let ok = shim.handle_request(json!({"op": "configure", "cluster": {"nodes": []}})).unwrap();
    /// assert_eq!(ok.to_json(), r#"{"ok":true,"protocol":1}"#);
    /// ```
    pub fn handle_request(&mut self, value: Value) -> Result<Response, WireError> {
        let request = parse_request(value).map_err(|m| {
            let path = m.path.clone();
            let detail = m.refused(RefusalKind::Parse).message;
            WireError::new(
                RefusalKind::Parse.as_str(),
                format!("not a known request: {detail}"),
                path,
            )
        })?;
        match request {
            Request::Configure { cluster } => {
                let config = parse_cluster(cluster)?;
                let scheduler = match &self.profile_maker {
                    None => Scheduler::new(config),
                    Some(maker) => {
                        maker(&config).and_then(|profile| Scheduler::with_profile(config, profile))
                    }
                }
                .map_err(config_refused)?;
                self.scheduler = Some(scheduler);
                Ok(Response(Body::Configured(Configured {
                    ok: true,
                    protocol: PROTOCOL_VERSION,
                })))
            }
            Request::Reconfigure { cluster } => {
                let scheduler = self.configured("reconfigure")?;
                let config = parse_cluster(cluster)?;
                scheduler.reconfigure(config).map_err(config_refused)?;
                Ok(Response(Body::Done(Done { ok: true })))
            }
            Request::Tick { at_ms, events } => {
                let scheduler = self.configured("tick")?;
                let mut parsed = Vec::with_capacity(events.len());
                let mut malformed = Vec::new();
                for (index, raw) in events.into_iter().enumerate() {
                    match parse_event(raw) {
                        Ok(event) => parsed.push((index, event)),
                        Err(m) => malformed.push(WireRejection {
                            index,
                            error: m
                                .under(&format!("events[{index}]"))
                                .wire(ErrorKind::Invalid.as_str()),
                        }),
                    }
                }
                let indices: Vec<usize> = parsed.iter().map(|(i, _)| *i).collect();
                let outcome = scheduler
                    .tick(at_ms, parsed.into_iter().map(|(_, e)| e).collect())
                    .map_err(|e| match e {
                        TickError::TimeWentBackwards { .. } => WireError::new(
                            RefusalKind::TimeWentBackwards.as_str(),
                            format!("at_ms: {e}"),
                            Some("at_ms".to_string()),
                        ),
                        // Its message names the field already.
                        TickError::TimeOutOfRange { .. } => WireError::new(
                            RefusalKind::Parse.as_str(),
                            e.to_string(),
                            Some("at_ms".to_string()),
                        ),
                    })?;
                let mut rejected = malformed;
                rejected.extend(outcome.rejected.into_iter().map(|mut r| {
                    r.index = indices[r.index];
                    WireRejection::from(r)
                }));
                rejected.sort_by_key(|r| r.index);
                Ok(Response(Body::Ticked(Ticked {
                    ok: true,
                    at_ms,
                    decisions: outcome.decisions,
                    rejected,
                    next_wakeup_ms: outcome.next_wakeup_ms,
                    plugin_faults: outcome.plugin_faults,
                })))
            }
            Request::Explain { at_ms, detail } => {
                let scheduler = self.configured("explain")?;
                let at_field = || Some("at_ms".to_string());
                if let Some(at) = at_ms {
                    crate::model::time::in_range("at_ms", at)
                        .map_err(|m| WireError::new(RefusalKind::Parse.as_str(), m, at_field()))?;
                }
                if let (Some(at), Some(last)) = (at_ms, scheduler.last_tick())
                    && at < last
                {
                    return Err(WireError::new(
                        RefusalKind::TimeWentBackwards.as_str(),
                        format!(
                            "at_ms: explain at {at} ms is earlier than the last tick at {last} ms"
                        ),
                        at_field(),
                    ));
                }
                let explanation = scheduler.explain();
                Ok(Response(Body::Explained(Explained {
                    ok: true,
                    pending: explanation.pending,
                    running: explanation.running,
                    shares: detail.then(|| scheduler.share_report()),
                    priorities: detail.then(|| scheduler.priorities()),
                    admission_usage: detail
                        .then(|| scheduler.admission_usage())
                        .filter(|rows| !rows.is_empty()),
                    fair_sharing: Some(scheduler.fair_shares(detail)).filter(|r| !r.is_empty()),
                })))
            }
            Request::Snapshot {} => {
                let scheduler = self.configured("snapshot")?;
                Ok(Response(Body::SnapshotTaken(Box::new(SnapshotTaken {
                    ok: true,
                    state: scheduler.snapshot(),
                }))))
            }
            Request::Restore { state } => {
                Snapshot::version_of(&state).map_err(|e| {
                    WireError::new(
                        RefusalKind::InvalidState.as_str(),
                        e.to_string(),
                        Some("state.version".to_string()),
                    )
                })?;
                let snapshot: Snapshot = parse_value(state)
                    .map_err(|m| m.under("state").refused(RefusalKind::InvalidState))?;
                let scheduler = match &self.profile_maker {
                    None => Scheduler::restore(snapshot),
                    Some(maker) => maker(snapshot.config())
                        .map_err(crate::error::RestoreError::from)
                        .and_then(|profile| Scheduler::restore_with_profile(snapshot, profile)),
                }
                .map_err(|e| refused(RefusalKind::InvalidState, e.to_string()))?;
                self.scheduler = Some(scheduler);
                Ok(Response(Body::Done(Done { ok: true })))
            }
            Request::WhatIf { job } => {
                let scheduler = self.configured("what_if")?;
                let job: crate::model::job::JobSpec = parse_value(job)
                    .map_err(|m| m.under("job").wire(ErrorKind::Invalid.as_str()))?;
                let answer = scheduler
                    .what_if(job)
                    .map_err(|e| WireError::new(e.kind.as_str(), e.message, None))?;
                Ok(Response(Body::Answered(Answered { ok: true, answer })))
            }
        }
    }

    fn configured(&mut self, what: &str) -> Result<&mut Scheduler, WireError> {
        self.scheduler.as_mut().ok_or_else(|| {
            refused(
                RefusalKind::NotConfigured,
                format!("{what} before configure: send a configure request first"),
            )
        })
    }
}

/// The response line of a request refused as a whole.
fn refusal(error: WireError) -> String {
    to_json(&Refused { ok: false, error })
}

fn refused(kind: RefusalKind, message: String) -> WireError {
    WireError::new(kind.as_str(), message, None)
}

/// A CLUSTER the configuration refused: `invalid_config` naming `cluster.` and the field.
fn config_refused(e: ConfigError) -> WireError {
    let path = if e.field.is_empty() {
        "cluster".to_string()
    } else {
        format!("cluster.{}", e.field)
    };
    WireError::new(
        RefusalKind::InvalidConfig.as_str(),
        format!("cluster.{e}"),
        Some(path),
    )
}

/// Parses a CLUSTER as `configure` does: a value that does not parse is refused with
/// `invalid_config`, its path naming the bad field (`cluster.nodes[0].gpus.count`). For a host
/// that takes a CLUSTER in its own data model (the Python bindings' `simulate`).
///
/// ```
/// let error = gangway::protocol::parse_cluster(serde_json::json!({"nodes": [{"name": 1}]}))
///     .unwrap_err();
/// assert_eq!(error.kind, "invalid_config");
/// assert_eq!(error.path.as_deref(), Some("cluster.nodes[0].name"));
/// ```
pub fn parse_cluster(cluster: Value) -> Result<ClusterConfig, WireError> {
    parse_value(cluster).map_err(|m| m.under("cluster").refused(RefusalKind::InvalidConfig))
}

/// A value that did not deserialize: the path of its first bad field, when serde knows it,
/// and what was wrong there.
#[derive(Debug)]
struct Malformed {
    /// The path below the value (`nodes[1].gpus.count`); `None` for the value itself.
    path: Option<String>,
    /// Serde's message.
    message: String,
}

impl Malformed {
    /// The same error seen from the value holding this one at `prefix` (`events[3]`).
    fn under(self, prefix: &str) -> Malformed {
        let path = match self.path {
            Some(path) if path.starts_with('[') => format!("{prefix}{path}"),
            Some(path) => format!("{prefix}.{path}"),
            None => prefix.to_string(),
        };
        Malformed {
            path: Some(path),
            message: self.message,
        }
    }

    /// The wire error of `kind`; the message starts with the path (`cluster.nodes[1]: …`).
    fn wire(self, kind: &str) -> WireError {
        let message = match &self.path {
            Some(path) => format!("{path}: {}", self.message),
            None => self.message,
        };
        WireError::new(kind, message, self.path)
    }

    /// [`Malformed::wire`] for a request refused as a whole.
    fn refused(self, kind: RefusalKind) -> WireError {
        self.wire(kind.as_str())
    }
}

/// Deserializes a value, keeping the path of the first bad field (`nodes[1].gpus.count`).
fn parse_value<T: DeserializeOwned>(value: Value) -> Result<T, Malformed> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        Malformed {
            path: (path != ".").then_some(path),
            message: e.inner().to_string(),
        }
    })
}

/// Parses a request object: its `op` names the [`Request`] variant, the other fields are that
/// variant's, so that a bad one is named by its path (`at_ms`, `events`).
fn parse_request(value: Value) -> Result<Request, Malformed> {
    let not_known = |path: Option<&str>, message: String| Malformed {
        path: path.map(str::to_string),
        message,
    };
    let Value::Object(mut fields) = value else {
        return Err(not_known(
            None,
            format!("{value} is not an object with an \"op\""),
        ));
    };
    let op = match fields.remove("op") {
        Some(Value::String(op)) => op,
        Some(other) => {
            return Err(not_known(
                Some("op"),
                format!("{other} is not a string naming the request"),
            ));
        }
        None => return Err(not_known(None, "missing field `op`".to_string())),
    };
    let tagged = Value::Object(serde_json::Map::from_iter([(
        op.clone(),
        Value::Object(fields),
    )]));
    parse_value::<Request>(tagged).map_err(|m| {
        // The path starts with the variant, the op; a path of the op alone is about the
        // request's fields as a whole (an unknown or missing one), none the op itself.
        let path = match m.path.as_deref() {
            None => Some("op"),
            Some(path) => path
                .strip_prefix(op.as_str())
                .map(|rest| rest.trim_start_matches('.'))
                .filter(|rest| !rest.is_empty()),
        };
        not_known(path, m.message)
    })
}

/// Parses one event. Serde loses the field path inside a tagged enum, so when a `submit` or
/// `node_add` fails, its payload is parsed again on its own to name the bad field
/// (`job.groups[0].cpus`).
fn parse_event(raw: Value) -> Result<Event, Malformed> {
    let payload = match raw.get("type").and_then(Value::as_str) {
        Some("submit") => raw.get("job").cloned().map(|v| ("job", v)),
        Some("node_add") => raw.get("node").cloned().map(|v| ("node", v)),
        _ => None,
    };
    parse_value::<Event>(raw).map_err(|whole| {
        let detail = match payload {
            Some(("job", v)) => parse_value::<crate::model::job::JobSpec>(v)
                .err()
                .map(|d| d.under("job")),
            Some((key, v)) => parse_value::<crate::config::NodeConfig>(v)
                .err()
                .map(|d| d.under(key)),
            None => None,
        };
        detail.unwrap_or(whole)
    })
}

fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| {
        format!(
            r#"{{"ok":false,"error":{{"kind":"{}","message":"cannot serialize: {e}"}}}}"#,
            RefusalKind::Internal
        )
    })
}
