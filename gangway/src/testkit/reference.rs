//! The reference pass: the plain full pass with every shortcut off, slow and obviously right,
//! beside the scheduler a host runs. [`reference_of`] makes the reference twin of a scheduler;
//! [`Twins`] ticks both through the same events and checks, after every tick, that they decided
//! the same (decisions, rejections, plug-in faults, next wake-up), report the same (every pending
//! job's position, reason, estimate and detail) and hold the same reservations. A shortcut or an
//! index that changes any of these is a bug, whatever it saves.
//!
//! ```
//! use gangway::testkit::reference::Twins;
//! use gangway::{ClusterConfig, Event, JobSpec, Scheduler};
//! let cluster: ClusterConfig =
//!     serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 2}]}"#).unwrap();
//! let mut twins = Twins::new(Scheduler::new(cluster).unwrap());
//! let jobs = (0..4).map(|i| Event::Submit { job: JobSpec::new(format!("j{i}"), 60_000, 1) });
//! twins.tick(0, jobs.collect()).unwrap().unwrap();
//! twins.tick(60_000, vec![]).unwrap().unwrap();
//! assert_eq!(twins.fast().state().running_count(), 2);
//! ```

use crate::decision::TickOutcome;
use crate::error::{EventError, TickError};
use crate::scheduler::{Scheduler, WhatIf};
use crate::testkit::oracle::check_tick;
use crate::{Event, JobSpec};

/// A copy of `scheduler` that runs the reference pass from its next tick on: no pass stops
/// when settled, no plan is kept without a search, no pass continues the last one, no
/// placement is answered from a memo.
pub fn reference_of(scheduler: &Scheduler) -> Scheduler {
    scheduler.with_reference_pass()
}

/// How often the fast scheduler took each shortcut the reference never takes, so that a test
/// can show its comparisons were not vacuous.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShortcutsTaken {
    /// Passes that stopped once settled, leaving later jobs' reasons to be derived.
    pub settled: usize,
    /// Reservations kept from the pass before without a search.
    pub kept: usize,
    /// Of those, reservations kept without a placement either (nothing it reads changed).
    pub kept_unplaced: usize,
    /// Searches after releases that came to their plan's start and took it without a
    /// placement (every node released or started on since out of its reach).
    pub searched_unplaced: usize,
    /// Passes that continued the one before instead of starting over.
    pub continued: u64,
    /// Order-based preemption searches that read only the running jobs their preemptor
    /// outranks, from the running jobs sorted once per pass.
    pub outranked_walks: u64,
    /// Preemption searches that found the first placeable prefix of their candidates by
    /// bisection.
    pub bisections: u64,
    /// Order-based preemption searches skipped as known to find no room, from a failed search
    /// of the same pass.
    pub no_room_skips: u64,
    /// Fair-sharing preemption searches skipped as equal to a failed search of the same pass,
    /// with nothing changed since.
    pub fair_no_room_skips: u64,
    /// Quota checks of jobs not placed answered by the verdict of a job alike, given since the
    /// earmarks and the usage last changed.
    pub quota_verdicts_reused: u64,
    /// Passes that took the pending order kept from the pass before, with only its changes
    /// applied (under `policy.priority.calc_period_ms`).
    pub kept_order: usize,
    /// Order-based preemption's victim orders that a pass made and a later pass brought up to
    /// date with the running jobs' changes instead of making afresh.
    pub victim_orders_carried: u64,
    /// Preemption searches whose fill-back (dropping the victims not needed) the task counts
    /// answered, with one placement instead of one per victim.
    pub counted_fill_backs: u64,
    /// Preemption searches that took the candidates an earlier search of the pass built for
    /// a preemptor alike (same queue and partition, and priority where the queue's policies
    /// read it), the queues' borrowing unchanged.
    pub candidates_reused: u64,
    /// Placements not tried because the job's quota ruled out every one: its quota verdict
    /// is the same wherever it would be placed, and says no.
    pub placements_spared: u64,
    /// Waiting jobs' turns that the free totals ended at once: the job's minimum exceeds what
    /// every node has free summed, and nothing else in the turn could change its verdict.
    pub turns_counted_out: u64,
}

/// A scheduler and its reference twin, ticked together.
#[derive(Clone, Debug)]
pub struct Twins {
    fast: Scheduler,
    reference: Scheduler,
    taken: ShortcutsTaken,
    /// The fast scheduler's cumulative counts (continued passes, preemption shortcuts) when
    /// it was last replaced.
    before: ShortcutsTaken,
}

impl Twins {
    /// `scheduler` and its reference twin ([`reference_of`]).
    pub fn new(scheduler: Scheduler) -> Self {
        Twins {
            reference: reference_of(&scheduler),
            fast: scheduler,
            taken: ShortcutsTaken::default(),
            before: ShortcutsTaken::default(),
        }
    }

    /// The shortcuts the fast scheduler took so far.
    pub fn shortcuts_taken(&self) -> ShortcutsTaken {
        let (
            _,
            _,
            continued,
            [
                outranked_walks,
                bisections,
                no_room_skips,
                fair_no_room_skips,
                quota_verdicts_reused,
                victim_orders_carried,
                counted_fill_backs,
                candidates_reused,
                placements_spared,
                turns_counted_out,
            ],
            _,
        ) = self.fast.shortcuts_taken();
        ShortcutsTaken {
            continued: self.before.continued + continued,
            outranked_walks: self.before.outranked_walks + outranked_walks,
            bisections: self.before.bisections + bisections,
            no_room_skips: self.before.no_room_skips + no_room_skips,
            fair_no_room_skips: self.before.fair_no_room_skips + fair_no_room_skips,
            quota_verdicts_reused: self.before.quota_verdicts_reused + quota_verdicts_reused,
            victim_orders_carried: self.before.victim_orders_carried + victim_orders_carried,
            counted_fill_backs: self.before.counted_fill_backs + counted_fill_backs,
            candidates_reused: self.before.candidates_reused + candidates_reused,
            placements_spared: self.before.placements_spared + placements_spared,
            turns_counted_out: self.before.turns_counted_out + turns_counted_out,
            ..self.taken
        }
    }

    /// The scheduler with its shortcuts.
    pub fn fast(&self) -> &Scheduler {
        &self.fast
    }

    /// The reference twin.
    pub fn reference(&self) -> &Scheduler {
        &self.reference
    }

    /// Replaces the fast scheduler (by its restore from a snapshot, say), keeping the reference
    /// as it is: from then on the restored one must decide as the uninterrupted reference.
    pub fn replace_fast(&mut self, fast: Scheduler) {
        self.before = self.shortcuts_taken();
        self.fast = fast;
    }

    /// Applies `f` to both (a reconfiguration, say); their answers must agree.
    pub fn both<T: PartialEq + std::fmt::Debug>(
        &mut self,
        mut f: impl FnMut(&mut Scheduler) -> T,
    ) -> Result<T, String> {
        let fast = f(&mut self.fast);
        let reference = f(&mut self.reference);
        if fast != reference {
            return Err(format!("fast {fast:?}, reference {reference:?}"));
        }
        self.same()?;
        Ok(fast)
    }

    /// Ticks both with `events`, runs the invariant oracle on each, and checks that they agree:
    /// `Err` describes the first disagreement or violation. A tick refused as a whole must be
    /// refused by both alike, which is `Ok(Err(refusal))`; otherwise `Ok(Ok(outcome))`, the
    /// fast one's.
    pub fn tick(
        &mut self,
        now_ms: u64,
        events: Vec<Event>,
    ) -> Result<Result<TickOutcome, TickError>, String> {
        let fast = self.fast.tick(now_ms, events.clone());
        let reference = self.reference.tick(now_ms, events);
        let (fast, reference) = match (fast, reference) {
            (Ok(fast), Ok(reference)) => (fast, reference),
            (Err(fast), Err(reference)) if fast == reference => return Ok(Err(fast)),
            (fast, reference) => {
                return Err(format!(
                    "at {now_ms} ms: the fast tick gave {fast:?}, the reference {reference:?}"
                ));
            }
        };
        check_tick(&self.fast, &fast).map_err(|e| format!("fast, at {now_ms} ms: {e}"))?;
        check_tick(&self.reference, &reference)
            .map_err(|e| format!("reference, at {now_ms} ms: {e}"))?;
        if fast != reference {
            return Err(format!(
                "at {now_ms} ms the decisions differ:\n fast      {fast:?}\n reference {reference:?}{}",
                self.started_by_one(&fast, &reference)
            ));
        }
        self.same().map_err(|e| format!("at {now_ms} ms: {e}"))?;
        let (settled, (kept, unplaced, searched_unplaced), _, _, kept_order) =
            self.fast.shortcuts_taken();
        self.taken.settled += usize::from(settled);
        self.taken.kept_order += usize::from(kept_order);
        self.taken.kept += kept;
        self.taken.kept_unplaced += unplaced;
        self.taken.searched_unplaced += searched_unplaced;
        Ok(Ok(fast))
    }

    /// For each job that one twin started in a tick and the other did not, the other's view
    /// of it (reason, estimate, detail): the first clue to a disagreement.
    fn started_by_one(&self, fast: &TickOutcome, reference: &TickOutcome) -> String {
        let started = |outcome: &TickOutcome| -> Vec<String> {
            (outcome.decisions.iter())
                .filter_map(|d| match d {
                    crate::Decision::Start { job, .. } => Some(job.clone()),
                    _ => None,
                })
                .collect()
        };
        let (by_fast, by_reference) = (started(fast), started(reference));
        let mut clues = String::new();
        for (twin, name, ours, others) in [
            (&self.fast, "fast", &by_fast, &by_reference),
            (&self.reference, "reference", &by_reference, &by_fast),
        ] {
            for job in others.iter().filter(|j| !ours.contains(j)) {
                let view = twin.explain().pending.into_iter().find(|p| &p.job == job);
                clues.push_str(&format!("\n {name} left {job} pending: {view:?}"));
            }
        }
        clues
    }

    /// Both answer [`Scheduler::what_if`] for `job` alike (the same start and placement, or the
    /// same error), and neither changes for being asked.
    ///
    /// ```
    /// use gangway::testkit::reference::Twins;
    /// use gangway::{ClusterConfig, Event, JobSpec, Scheduler};
    /// let cluster: ClusterConfig =
    ///     serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 2}]}"#).unwrap();
    /// let mut twins = Twins::new(Scheduler::new(cluster).unwrap());
    /// let jobs = (0..4).map(|i| Event::Submit { job: JobSpec::new(format!("j{i}"), 60_000, 1) });
    /// twins.tick(0, jobs.collect()).unwrap().unwrap();
    /// let answer = twins.what_if(JobSpec::new("probe", 60_000, 2)).unwrap();
    /// assert_eq!(answer.unwrap().start_ms, Some(120_000));
    /// ```
    pub fn what_if(&self, job: JobSpec) -> Result<Result<WhatIf, EventError>, String> {
        let fast = self.fast.what_if(job.clone());
        let reference = self.reference.what_if(job);
        if fast != reference {
            return Err(format!(
                "what_if differs:\n fast      {fast:?}\n reference {reference:?}"
            ));
        }
        self.same()?;
        Ok(fast)
    }

    /// The two agree on everything a host can read: the report of every pending job (position,
    /// reason, estimate, detail), the running jobs, the reservations and the next wake-up.
    pub fn same(&self) -> Result<(), String> {
        let (fast, reference) = (self.fast.explain(), self.reference.explain());
        if fast != reference {
            let first = fast
                .pending
                .iter()
                .zip(&reference.pending)
                .find(|(f, r)| f != r)
                .map(|(f, r)| format!("first difference: fast {f:?}, reference {r:?}"))
                .unwrap_or_else(|| "the lists differ in length or in running jobs".into());
            return Err(format!("explain differs; {first}"));
        }
        if self.fast.plans() != self.reference.plans() {
            return Err(format!(
                "reservations differ:\n fast      {:?}\n reference {:?}",
                self.fast.plans(),
                self.reference.plans()
            ));
        }
        if self.fast.next_wakeup() != self.reference.next_wakeup() {
            return Err(format!(
                "next wake-up: fast {:?}, reference {:?}",
                self.fast.next_wakeup(),
                self.reference.next_wakeup()
            ));
        }
        Ok(())
    }
}
