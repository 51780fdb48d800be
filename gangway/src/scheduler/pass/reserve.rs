//! Step 6, reserving: a resource-blocked job within the backfill depth is planned at the
//! earliest time its whole gang fits, pinned busy first, and booked into the pass's profile
//! (an overlay on the running jobs' ends) so that later jobs backfill around it.

use std::borrow::Cow;
use std::ops::ControlFlow;

use crate::backfill::{
    Availability, FutureView, IndexCandidates, LaterCandidates, earliest_fit_bound,
};
use crate::model::ids::{JobId, NodeId};
use crate::model::job::PlacementMode;
use crate::model::resources::NodeAmounts;
use crate::model::shape::{GpuNeed, TaskShape};
use crate::placement::fit::tasks_fitting;
use crate::placement::{
    Assignment, Candidates, CapacityView, GangRequest, NodeGate, Reach, assignments_fit, idle_now,
    place_gang,
};
use crate::scheduler::pass::Pass;
use crate::scheduler::pass::node_gate::JobGate;
use crate::scheduler::shortcuts::kept_plans::Placed;
use crate::scheduler::{Plan, Scheduler};
use crate::state::Job;
use crate::state::licenses::LicenseNeed;

/// The reservations a pass has made.
#[derive(Debug, Default)]
pub(super) struct Bookings {
    /// The reservations not yet handed to the scheduler, in the order they were made.
    pub(super) plans: Vec<(JobId, Plan)>,
    /// Every reservation's job, in the order they were made (the next pass's ranks).
    pub(super) order: Vec<JobId>,
}

/// What a reservation is sought for: the gang at its minimal counts, for its time limit.
pub(super) struct Reservation<'a> {
    /// The gang, at its minimal counts, through the job's node gate.
    pub(super) gang: GangRequest<'a>,
    /// The window's length: the job's time limit.
    pub(super) limit: u64,
    licenses: &'a LicenseNeed,
}

impl Scheduler {
    /// Plans a blocked job at the earliest time its whole gang (at `min_count`) fits and pins
    /// that reservation in the profile: the last pass's plan when it provably still is the
    /// earliest, otherwise the result of a search. `None`: it never fits, or only from a time
    /// beyond the range of [`crate::model::time`].
    pub(super) fn reserve(&mut self, id: JobId, pass: &mut Pass) -> Option<u64> {
        // Taken: the pass replaces every plan anyway.
        let previous = self
            .last
            .plans
            .remove(&id)
            .filter(|plan| plan.start_ms > pass.now);
        let profile = self.pass_profile(&mut pass.profile, pass.now);
        let job = self.state.job(id)?;
        let gate = JobGate::of(&self.profile, self.last.figures.context(&self.state), id);
        let minimal = minimal_shapes(job);
        let wanted = self.reservation(job, &minimal, gate.as_ref());
        pass.verdicts_stand &= minimal.len() == 1 && wanted.gang.topology.is_none();
        // Filters and scorers may change their answers between passes: plans they shaped are
        // searched again; so is every plan under compression, for an earlier start.
        let compress = self.compresses();
        let rank = self
            .kept_rank(id)
            .filter(|_| !compress && !gate.as_ref().is_some_and(JobGate::shapes_plans));
        let booked = pass.bookings.made();
        let released = !self.nothing_released();
        let stands = !released
            && previous.as_ref().zip(rank).is_some_and(|(plan, rank)| {
                let need = (wanted.limit, wanted.licenses);
                let kept = (id, plan, rank);
                self.plan_stands(
                    kept,
                    &wanted.gang,
                    need,
                    (profile, booked),
                    &mut pass.confirmed,
                )
            });
        pass.confirmed.kept += usize::from(stands);
        // After releases the search runs; at the plan's start it may take the plan unplaced.
        let unplaced = released
            && previous.as_ref().zip(rank).is_some_and(|(plan, rank)| {
                let kept = (id, plan, rank);
                let (limit, confirmed) = (wanted.limit, &mut pass.confirmed);
                self.placed_as_planned(kept, &wanted.gang, limit, (profile, booked), confirmed)
            });
        let previous_search = previous.as_ref().map(|plan| (plan, unplaced));
        // A plan searched afresh need not be what the next search returns (the last plan
        // breaks ties): only kept plans are sure to be kept again.
        pass.verdicts_stand &= stands;
        // A new plan, or `None` where the previous one is kept or taken at its start.
        let fresh = match previous.as_ref().filter(|_| stands) {
            Some(_) => None,
            None if compress => {
                Some(self.compressed(&wanted, profile, pass.now, previous.as_ref())?)
            }
            None => match self.earliest_start(&wanted, profile, pass.now, previous_search)? {
                Cow::Borrowed(_) => None,
                Cow::Owned(plan) => Some(plan),
            },
        };
        let (plan, same) = match (fresh, previous) {
            (Some(plan), previous) => {
                let same = previous.as_ref() == Some(&plan);
                (plan, same)
            }
            (None, Some(kept)) => (kept, true),
            // A plan kept or taken at its start is the previous one: never here.
            (None, None) => return None,
        };
        if plan.start_ms > crate::model::time::MAX_MS {
            // No tick reaches a start beyond the time range: it cannot be planned.
            return None;
        }
        pass.confirmed.searched_unplaced += usize::from(unplaced && same);
        // A fresh placement at the plan's start, with the plan as the previous one, picked it
        // again (a search returns the first start at which the placement succeeds), or would.
        if stands || same || (!compress && self.picks_itself(&wanted.gang, &plan)) {
            let placed = Placed {
                epochs: self.epochs(),
                idle_in_plan: (plan.assignments.iter()).any(|a| idle_now(self.state.node(a.node))),
            };
            pass.confirmed.placed_again(id, placed);
        }
        if let Some(rank) = rank.filter(|_| stands || same) {
            pass.confirmed.made_again(rank);
        }
        let start = plan.start_ms;
        let exclusive = job.spec.exclusive;
        let charges = |plan: &Plan| self.state.charges_of(&plan.assignments, exclusive);
        // The plan booked in the last pass, on the same amounts: exclusive ones read the nodes.
        let unchanged = (stands || same) && !exclusive;
        let limit = wanted.limit;
        pass.bookings.book(
            profile,
            (id, plan),
            (charges, unchanged),
            limit,
            wanted.licenses,
        );
        Some(start)
    }

    /// The earliest start of `id`'s whole gang (at `min_count`) on what the running jobs leave
    /// by their requested ends and the pass's reservations, searched afresh and booked nowhere:
    /// a head rule's estimate ([`crate::scheduler::pass::head`]). `None` as for
    /// [`Scheduler::reserve`].
    pub(super) fn estimate_start(&mut self, id: JobId, pass: &mut Pass) -> Option<u64> {
        let profile = self.pass_profile(&mut pass.profile, pass.now);
        let job = self.state.job(id)?;
        let gate = JobGate::of(&self.profile, self.last.figures.context(&self.state), id);
        let minimal = minimal_shapes(job);
        let wanted = self.reservation(job, &minimal, gate.as_ref());
        let plan = self.earliest_start(&wanted, profile, pass.now, None)?;
        (plan.start_ms <= crate::model::time::MAX_MS).then_some(plan.start_ms)
    }

    /// Under compression, `wanted`'s plan around every other reservation: the earliest start,
    /// when no later than the `previous` plan's; else the previous plan itself, when its
    /// resources still fit over its window (a greedy placement may miss what a kept one
    /// shows); else, the room it was booked on being gone (docs/protocol.md lists the causes),
    /// the earliest start. The plan carries the end of its window.
    fn compressed(
        &self,
        wanted: &Reservation<'_>,
        profile: &mut Availability,
        now: u64,
        previous: Option<&Plan>,
    ) -> Option<Plan> {
        let found = self.earliest_start(wanted, profile, now, previous.map(|p| (p, false)));
        let plan = match previous {
            Some(kept)
                if found.as_ref().is_none_or(|f| f.start_ms > kept.start_ms)
                    && self.still_fits(wanted, profile, kept) =>
            {
                kept.clone()
            }
            _ => found?.into_owned(),
        };
        Some(Plan {
            end_ms: Some(plan.start_ms.saturating_add(wanted.limit)),
            ..plan
        })
    }

    /// Whether `plan`'s own resources and `wanted`'s licenses are free over its window.
    fn still_fits(&self, wanted: &Reservation<'_>, profile: &Availability, plan: &Plan) -> bool {
        let end = plan.start_ms.saturating_add(wanted.limit);
        let view = self.future_view(profile, (plan.start_ms, end), &plan.assignments);
        profile.licenses.covers(wanted.licenses, plan.start_ms, end)
            && assignments_fit(&self.state.nodes, &view, wanted.gang, &plan.assignments)
    }

    /// What is free over `[start, end)` on `profile`, a reservation's `previous` resources
    /// first among equals ([`FutureView`]).
    pub(in crate::scheduler) fn future_view<'v>(
        &'v self,
        profile: &'v Availability,
        (start, end): (u64, u64),
        previous: &'v [Assignment],
    ) -> FutureView<'v> {
        FutureView {
            profile,
            running: &self.state.running_ends,
            start,
            end,
            maintenance: &self.state.maintenance,
            previous,
            quick_rejects: self.shortcuts,
        }
    }

    /// The pass's availability profile in `slot`, built at `now` on first use (in the memory
    /// of the last pass's, when it left one).
    pub(super) fn pass_profile<'p>(
        &mut self,
        slot: &'p mut Option<Availability>,
        now: u64,
    ) -> &'p mut Availability {
        let spare = match slot {
            None => self.last.take_spare(),
            Some(_) => None,
        };
        slot.get_or_insert_with(|| spare.unwrap_or_default().rebuild(&self.state, now))
    }

    /// What a reservation for `job` is sought for: its gang at `minimal` counts, through
    /// `gate`, for its time limit.
    pub(super) fn reservation<'a>(
        &'a self,
        job: &'a Job,
        minimal: &'a [TaskShape],
        gate: Option<&'a JobGate<'a>>,
    ) -> Reservation<'a> {
        Reservation {
            gang: GangRequest {
                shapes: minimal,
                gate: gate.map(|g| g as &dyn NodeGate),
                ..self.state.gang_request(job)
            },
            limit: job.spec.time_limit_ms,
            licenses: &job.licenses,
        }
    }

    /// Searches the earliest start of `wanted`, with its resources: the candidate times are
    /// the profile's release times and the `previous` plan's start, after `now`; the fit bounds
    /// move past hopeless stretches at once. The resources are chosen afresh, busy now first
    /// ([`FutureView`]), also at the previous plan's start: a pin follows the state of now.
    /// Within the busy and the idle class, the previous plan's resources come first, so that a
    /// plan stays put when the rule allows. With `previous` comes whether a placement at its
    /// start provably picks it again ([`Scheduler::placed_as_planned`]): then it is taken there
    /// without one, and returned as it is (borrowed).
    fn earliest_start<'p>(
        &self,
        wanted: &Reservation<'_>,
        profile: &mut Availability,
        now: u64,
        previous: Option<(&'p Plan, bool)>,
    ) -> Option<Cow<'p, Plan>> {
        let (previous, placed_as_planned) = match previous {
            Some((plan, placed)) => (Some(plan), placed),
            None => (None, false),
        };
        let shapes = wanted.gang.shapes;
        let cpu_milli = cpu_milli(shapes);
        let cpus_bound_them = cpus_bound(shapes);
        let mut cursor = now.saturating_add(1);
        loop {
            let running = &self.state.running_ends;
            let release = profile.next_release(running, cursor);
            let start = match previous.map(|p| p.start_ms).filter(|&t| t >= cursor) {
                Some(t) => release.map_or(t, |r| r.min(t)),
                None => release?,
            };
            cursor = start.saturating_add(1);
            let end = start.saturating_add(wanted.limit);
            if !profile.licenses.covers(wanted.licenses, start, end) {
                continue;
            }
            // Both bounds only skip hopeless starts. For cpu-only spread gangs the per-node one
            // (room for one task anywhere) is rarely the later: its sweep is not worth it.
            let nodes = &self.state.nodes;
            let bound =
                match profile.earliest_cpu_fit(running, nodes, cpu_milli, start, wanted.limit) {
                    b if b > start || cpus_bound_them => b,
                    _ => earliest_fit_bound((profile, running), nodes, shapes, start, wanted.limit),
                };
            if bound > start {
                if bound == u64::MAX {
                    return None;
                }
                cursor = bound;
                continue;
            }
            if let Some(plan) = previous.filter(|p| placed_as_planned && p.start_ms == start) {
                return Some(Cow::Borrowed(plan));
            }
            let previous = previous.map_or(&[][..], |plan| &plan.assignments);
            let view = self.future_view(profile, (start, end), previous);
            if let Some(assignments) = self.pin(&view, wanted.gang) {
                return Some(Cow::Owned(Plan {
                    start_ms: start,
                    assignments,
                    end_ms: None,
                }));
            }
        }
    }

    /// A reservation's resources over `view`, as a fresh search places them, in a canonical
    /// order: by group and node, and on each node the tasks' devices by device. The tasks of a
    /// group are alike, so a plan reads the same whichever order the busy-first rule met its
    /// nodes and devices in (what is busy changes between passes).
    pub(in crate::scheduler) fn pin(
        &self,
        view: &FutureView<'_>,
        gang: GangRequest<'_>,
    ) -> Option<Vec<Assignment>> {
        let nodes = &self.state.nodes;
        // Where no plug-in is asked about every node, the nodes that hold no task now and
        // release nothing by the window's start are passed over: a placement finds no room
        // there. The reference pass walks every node.
        let asks_plugins = gang.gate.is_some_and(|gate| gate.filters() || gate.ranks());
        let mut assignments = if self.shortcuts && !asks_plugins && gang.topology.is_none() {
            let later = LaterCandidates {
                index: &self.state.index,
                running: &self.state.running_ends,
                at: view.first_instant(),
            };
            if cfg!(debug_assertions) {
                self.check_passed_over(view, gang.shapes, &later);
            }
            place_gang(nodes, &later, view, gang)?
        } else {
            place_gang(nodes, &self.planning_candidates(), view, gang)?
        };
        assignments.sort_by_key(|a| (a.group, a.node));
        for assignment in &mut assignments {
            sort_task_devices(assignment);
        }
        Some(assignments)
    }

    /// Debug builds: every node a pin over `view` passes over (on `later`) has no room there
    /// for a task of any of `shapes`.
    fn check_passed_over(
        &self,
        view: &FutureView<'_>,
        shapes: &[TaskShape],
        later: &LaterCandidates<'_>,
    ) {
        let offered = |candidates: &dyn Candidates, shape: &TaskShape| {
            let mut offered = Vec::new();
            candidates.visit(shape, &mut |id| {
                offered.push(id);
                ControlFlow::Continue(())
            });
            offered.sort_unstable();
            offered
        };
        for shape in shapes {
            let kept = offered(later, shape);
            let every = offered(&self.planning_candidates(), shape);
            for id in every
                .into_iter()
                .filter(|id| kept.binary_search(id).is_err())
            {
                let node = self.state.node(id).expect("an indexed node exists");
                let room = view.free(id, node);
                assert!(
                    room.is_none_or(|room| tasks_fitting(node, &room, shape) == 0),
                    "node {id:?} passed over by a pin has room for a task"
                );
            }
        }
    }

    /// The candidates a reservation is placed on: every node of an allowed model, in the free
    /// index's order (a future window may use what is busy now).
    pub(in crate::scheduler) fn planning_candidates(&self) -> IndexCandidates<'_> {
        IndexCandidates {
            index: &self.state.index,
            preferred: &[],
            reach: Reach::Every,
        }
    }
}

/// `job`'s task groups at their minimal counts (an elastic gang is reserved at `min_count`).
pub(super) fn minimal_shapes(job: &Job) -> Vec<TaskShape> {
    job.shapes
        .iter()
        .map(|s| s.with_count(s.min_count))
        .collect()
}

/// The cpus `shapes` need in all.
pub(super) fn cpu_milli(shapes: &[TaskShape]) -> u64 {
    shapes
        .iter()
        .map(|s| s.cpu_milli * u64::from(s.count))
        .sum()
}

/// Whether cpus are all `shapes` need, spread: tasks without GPUs or memory, any node's
/// cpus good for any of them, so that the cluster's free cpus, summed, bound where they fit.
pub(super) fn cpus_bound(shapes: &[TaskShape]) -> bool {
    shapes
        .iter()
        .all(|s| s.gpu == GpuNeed::None && s.memory_mib == 0 && s.mode == PlacementMode::Spread)
}

/// Orders the tasks of `assignment` by their devices (each task lists the same number).
fn sort_task_devices(assignment: &mut Assignment) {
    let tasks = assignment.tasks as usize;
    if tasks < 2 || assignment.gpus.is_empty() || !assignment.gpus.len().is_multiple_of(tasks) {
        return;
    }
    let per_task = assignment.gpus.len() / tasks;
    let mut chunks: Vec<&[u32]> = assignment.gpus.chunks(per_task).collect();
    chunks.sort_unstable();
    assignment.gpus = chunks.concat();
}

impl Bookings {
    /// How many reservations this pass has made so far.
    pub(super) fn made(&self) -> usize {
        self.order.len() + self.plans.len()
    }

    /// Books `plan` for job `id`: its per-node `charges` and its licenses are reserved in
    /// `profile` over its window, and it becomes one of the next pass's plans. `unchanged`:
    /// the plan and its charges are those booked for the job in the last pass.
    fn book(
        &mut self,
        profile: &mut Availability,
        (id, plan): (JobId, Plan),
        (charges, unchanged): (impl FnOnce(&Plan) -> Vec<(NodeId, NodeAmounts)>, bool),
        limit: u64,
        licenses: &LicenseNeed,
    ) {
        let (start, end) = (plan.start_ms, plan.start_ms.saturating_add(limit));
        profile.reserve_plan(id, (|| charges(&plan), unchanged), start, end);
        profile.licenses.reserve(licenses, start, end);
        self.plans.push((id, plan));
    }
}
