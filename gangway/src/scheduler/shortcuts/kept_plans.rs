//! Backfill plans kept without a search. A job's plan from the last pass is still its earliest
//! start when nothing since can have moved it earlier:
//!
//! - no capacity was freed and no request changed: no event other than submits arrived and no
//!   running job lost its resources (the release epoch, [`crate::state::ClusterState::releases`],
//!   is unchanged);
//! - every reservation the last pass made before this job's has been made again in this pass,
//!   identically, before this job's turn (an order change, a hold, a cancel or a different plan
//!   of an earlier job could otherwise leave room that was taken before);
//! - no preemption is configured and no earmark exists;
//! - the job is one task group without a topology constraint, whose placement is exact (it fits
//!   a window iff its nodes' task fits add up, see `fit_memo`), so fitting is monotone in usage;
//! - its licenses still fit over the planned window, and a fresh placement at its start, with
//!   the plan as the previous plan that breaks busy-first ties, picks exactly its pinned
//!   resources (as the search would there: `reserve` passes the same previous plan).
//!
//! Then usage now is, at every future instant, at least what it was when the plan was made (new
//! starts and new jobs' reservations only add), so no earlier start can fit now that did not fit
//! then; the plan's start still fits, and there the search would place the gang afresh, as the
//! last check did: a full search would return the plan. This rests on the search being exact:
//! it tries every instant at which usage steps down (every release, also the instant after
//! `now` when a job past its time limit is taken to end now), and a one-group gang fits a
//! window iff its placement finds room.
//!
//! The last check is the placement itself, not only a fit of the old pins: a reservation takes
//! resources busy now before idle ones ([`crate::placement::gang::BusyFirst`]), and a job started
//! since on a node idle then (a backfill job ending before the plan's start, say) makes it busy
//! now and free by the start, so a fresh search may now prefer it to a pinned idle node. Pins
//! are chosen afresh at every pass; a kept plan saves the search of the earlier start times.
//!
//! That placement is itself skipped where it provably returns the plan: the last pass found
//! that a fresh placement picks exactly the plan's resources, with the plan as the previous
//! plan, and nothing it reads has changed since. No job started and none released anything
//! (the state's start and release epochs are unchanged: the nodes' usage, the free index's
//! order and the running jobs' part of the profile are as they were), no GPU job was submitted
//! (the mix epoch is unchanged: fragmentation against the shape mix ranks the nodes that the
//! busy-first rule ties, and the default profile picks a fraction's device by it), and the
//! reservations booked before this job's turn are exactly the last pass's earlier ones, made
//! again. The placement is a function of those inputs alone.
//!
//! Jobs started since on other nodes leave it so where they cannot reach the placement. A
//! start changes its own nodes' rank (busy now before idle now), their place in the free index
//! and their room over the window, and nothing of any other node. Where every node started on
//! since is outside the plan and holds no task of the gang over the plan's window, the other
//! nodes are offered in the same order relative to each other, with the same room, and the
//! started ones, wherever they now rank, offer nothing: a spread walk meets the same fits, and
//! packing and the least-fragmenting choice rank the same candidates. A started node outside
//! the plan with room left over the window (a backfilled job that ends before the plan's start)
//! is busy now and free then, and a fresh placement may now prefer it: the placement runs. A
//! started node of the plan may still be taken by it (the rules for releases below). Debug
//! builds place afresh and compare.
//!
//! Releases move a plan's earliest start only earlier: the search runs, and where it comes to
//! the plan's start, the placement there is skipped when every change since that may free
//! capacity was a running job's release (the state logs their nodes,
//! [`crate::state::releases`]) and every node released or started on since is out of the
//! placement's reach or still taken by it. A spread gang placed one task per node stopped its
//! walk at the plan's last node; the walk takes the nodes busy now first (within them the
//! plan's), then the plan's nodes idle now, then every other node idle now:
//!
//! - a node outside the plan is out of reach when it holds no task of the gang over the window,
//!   or is idle now (it ranks behind every node of the plan), or when every node of the plan
//!   was busy now when it was last placed and still is (the walk offers the nodes busy now of
//!   the previous plan first: the plan's nodes, all of them, and it stops at the last);
//! - a node of the plan is still taken when it still holds its task over the window and is busy
//!   now (every node busy now of the plan's rank is the plan's), or idle now where no node busy
//!   now outside the plan holds a task: where a node of the plan was idle when the plan was
//!   last placed, the walk then met every node busy then, and those outside the plan held no
//!   task (those that changed since are checked one by one); else every node busy now outside
//!   the plan is asked, once.
//!   Tasks with GPUs are left out (their devices follow what is in use now), and so are gangs
//!   that take whole nodes.
//!
//! This is the usual case of a head job waiting for wide room while jobs end and backfilled
//! jobs start: the same plan is found again, without a placement.
//!
//! A plan such a search places afresh (another than the last) counts as placed again at once,
//! under the same conditions (one task on each of `count` nodes of a spread, no GPUs, no whole
//! nodes): its walk took every node busy now with room before any node idle now, so a walk
//! with the new plan's nodes first takes its nodes busy now, meets no node busy now outside it
//! with room, and takes its nodes idle now. The next search after releases may skip its
//! placement too.
//!
//! Conservative backfill re-plans every pending job at every pass; this skips the search for
//! each one whose plan provably stands. Property tests tick random streams with and without it
//! and compare every decision, plan and report.

use crate::backfill::Availability;
use crate::model::ids::{JobId, NodeId};
use crate::model::job::PlacementMode;
use crate::model::shape::{GpuNeed, TaskShape};
use crate::placement::fit::tasks_fitting;
use crate::placement::gang::PlannedNodes;
use crate::placement::{CapacityView, GangRequest, idle_now};
use crate::scheduler::{Plan, Scheduler};
use crate::state::licenses::LicenseNeed;

/// The order of the reservations one pass made, and the release epoch it ended at.
#[derive(Clone, Debug, Default)]
pub(in crate::scheduler) struct KeptPlans {
    epoch: u64,
    rank: ByJob<usize>,
    /// How many of these plans were kept from the pass before without a search.
    pub(in crate::scheduler) kept: usize,
    /// How many of the kept plans were kept without a placement either (for the test kit).
    #[cfg(any(test, feature = "testkit"))]
    pub(in crate::scheduler) unplaced: usize,
    /// How many searches after releases took their plan again without a placement (for the
    /// test kit).
    #[cfg(any(test, feature = "testkit"))]
    pub(in crate::scheduler) searched_unplaced: usize,
    /// The plans a fresh placement at their start picked again, by job, with the state's
    /// epochs when it did.
    fixed: ByJob<Placed>,
    /// The nodes the pass started jobs on, each with the state's start epoch after the start.
    started_on: Vec<(u64, NodeId)>,
}

/// A state's release, start and shape-mix epochs: equal epochs mean that no node's usage
/// changed and that placements rank nodes and devices as they did.
pub(in crate::scheduler) type Epochs = (u64, u64, u64);

/// A plan that a fresh placement picked again: the state's epochs then, and whether a node of
/// the plan was idle then (the busy-first walk then met every node busy then, and every one
/// outside the plan held no task of the gang over the plan's window).
#[derive(Clone, Copy, Debug)]
pub(in crate::scheduler) struct Placed {
    pub(in crate::scheduler) epochs: Epochs,
    pub(in crate::scheduler) idle_in_plan: bool,
}

impl KeptPlans {
    /// The oldest release epoch a later pass asks about: that of the first placement recorded
    /// ([`Confirmed::placed_again`]), or the pass's own when there is none.
    pub(in crate::scheduler) fn oldest_epoch(&self) -> u64 {
        (self.fixed.0.iter())
            .map(|(_, placed)| placed.epochs.0)
            .min()
            .unwrap_or(self.epoch)
    }

    /// Becomes the plans made in `order` by a pass that ended at release epoch `epoch`,
    /// `confirmed` saying which it kept without a search and which a fresh placement picked
    /// again; in the memory of the plans it held.
    pub(in crate::scheduler) fn renew(
        &mut self,
        epoch: u64,
        order: &[JobId],
        confirmed: &Confirmed,
    ) {
        self.epoch = epoch;
        self.rank
            .refill(order.iter().enumerate().map(|(i, &id)| (id, i)));
        self.kept = confirmed.kept;
        #[cfg(any(test, feature = "testkit"))]
        {
            self.unplaced = confirmed.unplaced;
            self.searched_unplaced = confirmed.searched_unplaced;
        }
        self.fixed.refill(confirmed.fixed.iter().copied());
        self.started_on.clear();
        self.started_on.extend_from_slice(&confirmed.started_on);
    }
}

/// Values by job, sorted by job for a binary search: two small vectors a pass where two B-tree
/// maps were built (under EASY, for one plan).
#[derive(Clone, Debug)]
struct ByJob<T>(Vec<(JobId, T)>);

impl<T> Default for ByJob<T> {
    fn default() -> Self {
        ByJob(Vec::new())
    }
}

impl<T: Copy> ByJob<T> {
    /// Holds `values` (in any order) instead of its own; where a job comes more than once,
    /// its last value stands.
    fn refill(&mut self, values: impl Iterator<Item = (JobId, T)>) {
        let by_job = &mut self.0;
        by_job.clear();
        by_job.extend(values);
        // Last first, so that the stable sort keeps the last of a job's values first, and the
        // dedup keeps that one.
        by_job.reverse();
        by_job.sort_by_key(|&(id, _)| id);
        by_job.dedup_by_key(|&mut (id, _)| id);
    }

    /// The value of `id`, if it has one.
    fn get(&self, id: JobId) -> Option<T> {
        let at = self.0.binary_search_by_key(&id, |&(job, _)| job).ok()?;
        Some(self.0[at].1)
    }
}

/// Which of the last pass's reservations this pass has made again, identically, by rank.
#[derive(Debug, Default)]
pub(in crate::scheduler) struct Confirmed {
    /// Plans kept without a search.
    pub(in crate::scheduler) kept: usize,
    /// Plans kept without a placement either.
    unplaced: usize,
    /// Searches after releases that took their plan again without a placement.
    pub(in crate::scheduler) searched_unplaced: usize,
    made_again: Vec<bool>,
    /// How many of the last pass's reservations, from the first, are all made again.
    prefix: usize,
    /// The plans a fresh placement at their start picked again, with the state's epochs then.
    fixed: Vec<(JobId, Placed)>,
    /// The nodes this pass started jobs on, each with the state's start epoch after the start.
    started_on: Vec<(u64, NodeId)>,
}

impl Confirmed {
    /// Records that the reservation of rank `rank` in the last pass was made again as before.
    pub(in crate::scheduler) fn made_again(&mut self, rank: usize) {
        if self.made_again.len() <= rank {
            self.made_again.resize(rank + 1, false);
        }
        self.made_again[rank] = true;
    }

    /// Records that a fresh placement at the start of job `id`'s plan, with the plan as the
    /// previous plan, picked exactly the plan's resources, as [`Placed`] says.
    pub(in crate::scheduler) fn placed_again(&mut self, id: JobId, placed: Placed) {
        self.fixed.push((id, placed));
    }

    /// Records that this pass started a job on `node`, the state's start epoch being `epoch`
    /// after the start.
    pub(in crate::scheduler) fn started_on(&mut self, epoch: u64, node: NodeId) {
        self.started_on.push((epoch, node));
    }

    /// Whether every reservation the last pass made before rank `rank` was made again.
    fn covers(&mut self, rank: usize) -> bool {
        while self.made_again.get(self.prefix) == Some(&true) {
            self.prefix += 1;
        }
        self.prefix >= rank
    }
}

impl Scheduler {
    /// `id`'s rank among the last pass's reservations.
    pub(in crate::scheduler) fn kept_rank(&self, id: JobId) -> Option<usize> {
        self.last.kept.as_ref()?.rank.get(id)
    }

    /// Whether nothing freed capacity or changed a request since the last pass.
    pub(in crate::scheduler) fn nothing_released(&self) -> bool {
        self.last
            .kept
            .as_ref()
            .is_some_and(|kept| kept.epoch == self.state.releases.epoch())
    }

    /// The state's release, start and shape-mix epochs now.
    pub(in crate::scheduler) fn epochs(&self) -> Epochs {
        let state = &self.state;
        (state.releases.epoch(), state.start_epoch, state.mix_epoch)
    }

    /// Whether `plan`, job `id`'s plan of rank `rank` ([`Scheduler::kept_rank`]) from the last
    /// pass (starting after now), is provably still its job's earliest, nothing having been
    /// released since ([`Scheduler::nothing_released`]) and `booked` reservations having been
    /// made before its turn in this pass: see the module docs.
    pub(in crate::scheduler) fn plan_stands(
        &self,
        (id, plan, rank): (JobId, &Plan, usize),
        gang: &GangRequest<'_>,
        (limit, licenses): (u64, &LicenseNeed),
        (profile, booked): (&Availability, usize),
        confirmed: &mut Confirmed,
    ) -> bool {
        let end = plan.start_ms.saturating_add(limit);
        if !(self.may_keep(gang)
            && confirmed.covers(rank)
            && profile.licenses.covers(licenses, plan.start_ms, end))
        {
            return false;
        }
        let kept = (id, plan, rank);
        if self.placed_as_before(kept, gang, (end, profile), booked, &confirmed.started_on) {
            confirmed.unplaced += 1;
            return true;
        }
        self.placed_afresh(plan, gang, end, profile)
    }

    /// Whether a placement of `gang` at the start of `plan`, job `id`'s plan of rank `rank`
    /// from the last pass, for `limit` ms, provably picks exactly the plan, `booked`
    /// reservations having been made before its turn in this pass: a search after releases
    /// that comes to the plan's start takes it without a placement (module docs).
    pub(in crate::scheduler) fn placed_as_planned(
        &self,
        (id, plan, rank): (JobId, &Plan, usize),
        gang: &GangRequest<'_>,
        limit: u64,
        (profile, booked): (&Availability, usize),
        confirmed: &mut Confirmed,
    ) -> bool {
        let end = plan.start_ms.saturating_add(limit);
        self.may_keep(gang)
            && confirmed.covers(rank)
            && self.placed_as_before(
                (id, plan, rank),
                gang,
                (end, profile),
                booked,
                &confirmed.started_on,
            )
    }

    /// Whether a fresh placement at the start of `plan`, which a search has just placed there
    /// for `gang`, picks it again with itself as the previous plan (module docs): the walk that
    /// found it took every node busy now with room before any node idle now, so with the
    /// plan's own nodes first it takes them again, those busy now first and then, none busy
    /// outside the plan having room, those idle now.
    pub(in crate::scheduler) fn picks_itself(&self, gang: &GangRequest<'_>, plan: &Plan) -> bool {
        let [shape] = gang.shapes else {
            return false;
        };
        self.may_keep(gang) && taken_alike(gang, shape, plan)
    }

    /// Whether a reservation of `gang` may be answered from the last pass's: the shortcuts
    /// are on, no preemption is configured and no earmark exists, and the gang is one task
    /// group without a topology constraint.
    fn may_keep(&self, gang: &GangRequest<'_>) -> bool {
        self.shortcuts
            && !self.state.config.policy.preemption.enabled
            && self.state.earmarks.is_empty()
            && gang.shapes.len() == 1
            && gang.topology.is_none()
    }

    /// Whether the last pass found that a fresh placement picks job `id`'s plan (of rank `rank`)
    /// again, and what that placement reads has not changed since (module docs): the shape mix
    /// is as it was, the `booked` reservations made before this job's turn are exactly the
    /// last pass's earlier ones (which [`Confirmed::covers`] found made again), every change
    /// since that may free capacity was a running job's release, and every node a job started
    /// on since (`started_in_pass` in this pass) or released since is either outside the plan,
    /// holding no task of `gang` over its window `[plan start, end)` on `profile` or idle now
    /// behind a spread walk that stopped at the plan's last node, or a node of the plan that a
    /// walk still takes.
    fn placed_as_before(
        &self,
        (id, plan, rank): (JobId, &Plan, usize),
        gang: &GangRequest<'_>,
        (end, profile): (u64, &Availability),
        booked: usize,
        started_in_pass: &[(u64, NodeId)],
    ) -> bool {
        let Some(kept) = self.last.kept.as_ref() else {
            return false;
        };
        let Some(placed) = kept.fixed.get(id) else {
            return false;
        };
        let (release, started, mix) = placed.epochs;
        let state = &self.state;
        if booked != rank || mix != state.mix_epoch {
            return false;
        }
        let Some(released) = state.releases.nodes_since(release) else {
            return false;
        };
        let [shape] = gang.shapes else {
            return false;
        };
        let view = self.future_view(profile, (plan.start_ms, end), &plan.assignments);
        let holds_none = |node: NodeId| {
            state.node(node).is_none_or(|record| {
                !record.partitions.contains(gang.partition)
                    || view
                        .free(node, record)
                        .is_none_or(|room| tasks_fitting(record, &room, shape) == 0)
            })
        };
        // A spread walk that stopped at the plan's last node met no node idle now outside the
        // plan; where every node of the plan was busy when it was last placed (and still is:
        // the changed ones must be still taken below), it met no node outside the plan at all,
        // the plan's nodes busy now being offered first.
        let stopped_early = one_task_a_node(shape, plan);
        let unreached =
            |node: NodeId| stopped_early && (!placed.idle_in_plan || idle_now(state.node(node)));
        let planned = PlannedNodes::of(&plan.assignments);
        let in_plan = |node: NodeId| planned.contains(node);
        let out_of_reach = |node: NodeId| !in_plan(node) && (unreached(node) || holds_none(node));
        // Whether no node busy now outside the plan holds a task over the window: asked once,
        // of every node, where a node of a plan of busy nodes turned idle.
        let busy_outside_hold_none = std::cell::OnceCell::new();
        let busy_outside_hold_none = || {
            *busy_outside_hold_none.get_or_init(|| {
                let ids = (0..state.nodes.len() as u32).map(NodeId);
                let mut busy_outside = ids.filter(|&id| !in_plan(id) && !idle_now(state.node(id)));
                busy_outside.all(|id| {
                    let quick = state
                        .node(id)
                        .is_some_and(|n| view.holds_no_task(id, n, shape));
                    quick || holds_none(id)
                })
            })
        };
        // A node of the plan that still holds its task over the window is still taken: the
        // walk meets every node of the plan busy now before any other (they are all the
        // plan's), and a node idle now after every node busy now, none of which outside the
        // plan holds a task: where a node of the plan was idle when the walk last met them,
        // none did then (those changed since are checked one by one), else every one is
        // asked. Its devices are chosen by what is in use: only tasks without GPUs are sure
        // to be placed alike, and only a gang that does not need whole nodes.
        let still_taken = |node: NodeId| {
            taken_alike(gang, shape, plan)
                && !holds_none(node)
                && (placed.idle_in_plan || !idle_now(state.node(node)) || busy_outside_hold_none())
        };
        let since = kept
            .started_on
            .partition_point(|&(epoch, _)| epoch <= started);
        let started_on = kept.started_on[since..].iter().chain(started_in_pass);
        let mut changed = started_on.map(|&(_, node)| node).chain(released);
        let spared = changed.all(|node| out_of_reach(node) || (in_plan(node) && still_taken(node)));
        debug_assert!(
            !spared || self.placed_afresh(plan, gang, end, profile),
            "a plan placed as before is what a fresh placement picks"
        );
        spared
    }

    /// Whether a fresh placement of `gang` over `[plan.start_ms, end)`, as the search makes it
    /// there (with `plan` as the previous plan that breaks ties), picks exactly `plan`'s
    /// resources.
    fn placed_afresh(
        &self,
        plan: &Plan,
        gang: &GangRequest<'_>,
        end: u64,
        profile: &Availability,
    ) -> bool {
        let view = self.future_view(profile, (plan.start_ms, end), &plan.assignments);
        self.pin(&view, *gang)
            .is_some_and(|fresh| fresh == plan.assignments)
    }
}

/// Whether `plan` has one task on each of `shape`'s `count` nodes of a spread: the walk that
/// placed it stopped at its last node, having met no node idle now outside it
/// ([`crate::placement::gang::BusyFirst`]).
fn one_task_a_node(shape: &TaskShape, plan: &Plan) -> bool {
    let spread = matches!(
        shape.mode,
        PlacementMode::Spread | PlacementMode::StrictSpread
    );
    spread && plan.assignments.len() == shape.count as usize
}

/// Whether every node of `plan` is taken alike by a walk that meets it with room: one task a
/// node, without devices (their choice follows what is in use now), for a gang that does not
/// take whole nodes.
fn taken_alike(gang: &GangRequest<'_>, shape: &TaskShape, plan: &Plan) -> bool {
    one_task_a_node(shape, plan) && shape.gpu == GpuNeed::None && !gang.exclusive
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use crate::config::ClusterConfig;
    use crate::event::Event;
    use crate::model::ids::JobId;
    use crate::model::job::JobSpec;
    use crate::scheduler::Plan;
    use crate::scheduler::Scheduler;

    /// A one-task job of `gpus` GPUs for 100 s.
    fn job(id: &str, gpus: f64) -> JobSpec {
        serde_json::from_value(serde_json::json!({"id": id, "time_limit_ms": 100_000,
            "groups": [{"count": 1, "cpus": 0.1, "memory_mib": 10, "gpus": gpus}]}))
        .unwrap()
    }

    /// One node of two GPUs in backfill mode `mode`: device 0 in use until 100 s, and 0.7 of
    /// device 1, of which 0.3 until 100 s and 0.4 until 200 s. Job "h" needs half a GPU:
    /// planned at 100 s, where device 0 (1.0 free) and device 1 (0.6 free) both hold it.
    /// Against the mix of the jobs so far (the whole GPU weighs most) it takes device 1,
    /// leaving device 0 whole; ticks without events keep that plan.
    fn half_gpu_planned_at_100_s(mode: &str) -> Scheduler {
        let cluster: ClusterConfig = serde_json::from_value(serde_json::json!({
            "nodes": [{"name": "n1", "cpus": 64, "memory_mib": 640_000,
                       "gpus": {"model": "a100", "count": 2}}],
            "policy": {"backfill": {"mode": mode}}
        }))
        .unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let mut long = job("long", 0.4);
        long.time_limit_ms = 200_000;
        let jobs = [job("whole", 1.0), long, job("short", 0.3), job("h", 0.5)];
        s.tick(0, jobs.map(|job| Event::Submit { job }).to_vec())
            .unwrap();
        // The first tick finds the plan placed again at its start; the second keeps it.
        s.tick(1, Vec::new()).unwrap();
        s.tick(2, Vec::new()).unwrap();
        assert_eq!(h_devices(&s), [1]);
        s
    }

    /// The devices of job "h"'s plan.
    fn h_devices(s: &Scheduler) -> Vec<u32> {
        let h = s.state.job_id("h").unwrap();
        s.last.plans[&h].assignments[0].gpus.clone()
    }

    /// Ticks `events` into `s` and its reference twin; "h"'s devices in both.
    fn devices_after(mut s: Scheduler, events: Vec<Event>) -> (Vec<u32>, Vec<u32>) {
        let mut reference = s.with_reference_pass();
        s.tick(3, events.clone()).unwrap();
        reference.tick(3, events).unwrap();
        (h_devices(&s), h_devices(&reference))
    }

    /// A job of `count` tasks of `cpus` cpus, one per node, for `limit` ms.
    fn per_node(id: &str, limit: u64, count: u32, cpus: u32) -> JobSpec {
        serde_json::from_value(serde_json::json!({"id": id, "time_limit_ms": limit,
            "groups": [{"count": count, "cpus": cpus, "placement": "strict_spread"}]}))
        .unwrap()
    }

    /// Four nodes of 4 cpus and n5 of 8, three busy: "a" and "c" until 100 s, "b" until
    /// 200 s. "head" needs three nodes: planned at 100 s on n1 and n3 (busy now first), then
    /// n4, and a tick later placed again so. Then `job` is submitted and starts (on n5, the
    /// one node 8 cpus fit, or on n4 for 4 cpus, best fit): [`start_beside_a_plan_on`].
    fn start_beside_a_plan(job: JobSpec) -> (BTreeMap<JobId, Plan>, BTreeMap<JobId, Plan>, bool) {
        start_beside_a_plan_on(&[4, 4, 4, 4, 8], &[100, 200, 100], 3, job)
    }

    /// Nodes of `cpus` cpus each, the first `busy.len()` running a job of 4 cpus for as many
    /// seconds; "head" needs `width` nodes of 4 cpus, is planned, and a tick later placed again.
    /// Then `job` is submitted and starts, and a tick later the scheduler and its reference
    /// twin pass again: the fast one's plans, the reference's, and whether the fast one kept
    /// the plan without a placement.
    fn start_beside_a_plan_on(
        cpus: &[u32],
        busy: &[u64],
        width: u32,
        job: JobSpec,
    ) -> (BTreeMap<JobId, Plan>, BTreeMap<JobId, Plan>, bool) {
        let nodes: Vec<_> = (1..)
            .zip(cpus)
            .map(|(i, cpus)| serde_json::json!({"name": format!("n{i}"), "cpus": cpus}))
            .collect();
        let cluster: ClusterConfig =
            serde_json::from_value(serde_json::json!({ "nodes": nodes })).unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let mut jobs: Vec<_> = (busy.iter().enumerate())
            .map(|(i, seconds)| per_node(&format!("j{i}"), seconds * 1_000, 1, 4))
            .collect();
        jobs.push(per_node("head", 100_000, width, 4));
        let submits = jobs.into_iter().map(|job| Event::Submit { job }).collect();
        s.tick(0, submits).unwrap();
        s.tick(1, Vec::new()).unwrap();
        let out = s.tick(2, vec![Event::Submit { job }]).unwrap();
        assert_eq!(out.decisions.len(), 1, "{:?}", out.decisions);
        let mut reference = s.with_reference_pass();
        s.tick(3, Vec::new()).unwrap();
        reference.tick(3, Vec::new()).unwrap();
        let unplaced = s.shortcuts_taken().1 == (1, 1, 0);
        (s.last.plans.clone(), reference.last.plans.clone(), unplaced)
    }

    #[test]
    fn values_by_job_are_found_by_job_and_the_last_of_a_job_stands() {
        let mut by_job = super::ByJob::default();
        by_job.refill([(JobId(9), 'x'), (JobId(3), 'y')].into_iter());
        // Refilled: the values held before are gone.
        by_job.refill([(JobId(7), 'a'), (JobId(2), 'b'), (JobId(7), 'c')].into_iter());
        assert_eq!(by_job.get(JobId(7)), Some('c'), "the later value of job 7");
        assert_eq!(by_job.get(JobId(2)), Some('b'));
        assert_eq!(by_job.get(JobId(3)), None);
        assert_eq!(by_job.get(JobId(9)), None);
        assert_eq!(by_job.0.len(), 2);
    }

    #[test]
    fn a_start_on_a_node_the_plan_cannot_use_leaves_it_unplaced() {
        // A long job holds n5 all through the plan's window: the plan stands as it was.
        let (fast, reference, unplaced) = start_beside_a_plan(per_node("long", 1_000_000, 1, 8));
        assert!(unplaced);
        assert_eq!(fast, reference);
    }

    #[test]
    fn a_start_on_a_node_free_again_by_the_plan_moves_it_there() {
        // A short job ends before the plan's start: n5 is busy now and free then, and a
        // reservation takes what is busy now first, so the plan moves from n4 to n5.
        let (fast, reference, unplaced) = start_beside_a_plan(per_node("short", 50_000, 1, 8));
        assert!(!unplaced);
        assert_eq!(fast, reference);
        assert_eq!(plan_nodes(&fast), [0, 2, 4]);
    }

    #[test]
    fn a_start_on_a_node_of_the_plan_free_again_by_its_start_leaves_it_unplaced() {
        // A short job of 4 cpus starts on n4, best fit, and ends before the plan's start: n4
        // is busy now, ranking with the plan's other busy nodes, and still free then.
        let (fast, reference, unplaced) = start_beside_a_plan(per_node("short", 50_000, 1, 4));
        assert!(unplaced);
        assert_eq!(fast, reference);
        assert_eq!(plan_nodes(&fast), [0, 2, 3]);
    }

    #[test]
    fn a_start_beside_a_plan_of_busy_nodes_leaves_it_unplaced() {
        // n1 and n2 busy until 100 s, n3 until 200 s, n4 (8 cpus) idle: "head" (two nodes) is
        // planned at 100 s on n1 and n2, both busy now. A short job of 8 cpus starts on n4 and
        // ends before the plan's start: busy now and free then, but the walk offers the plan's
        // nodes busy now first, takes both and stops.
        let short = per_node("short", 50_000, 1, 8);
        let (fast, reference, unplaced) =
            start_beside_a_plan_on(&[4, 4, 4, 8], &[100, 100, 200], 2, short);
        assert!(unplaced);
        assert_eq!(fast, reference);
        assert_eq!(plan_nodes(&fast), [0, 1]);
    }

    /// The nodes of every plan in `plans`, by id.
    fn plan_nodes(plans: &BTreeMap<JobId, Plan>) -> Vec<u32> {
        plans
            .values()
            .flat_map(|p| &p.assignments)
            .map(|a| a.node.0)
            .collect()
    }

    /// Nodes of 4 cpus, one per entry of `busy`, each running a one-node job for as many
    /// seconds; "head" needs `width` of them, one per node, and is planned at the first time
    /// it fits, then placed again a tick later. From 3 ms on, a tick a millisecond, the jobs
    /// on the nodes `ends` (from 0) finish one by one, and the scheduler and its reference
    /// twin pass: the fast one's plans before and after, the reference's, and whether the
    /// fast one's last search took the plan without a placement.
    fn release_beside_a_plan(
        busy: &[u64],
        width: u32,
        ends: &[usize],
    ) -> (Vec<u32>, BTreeMap<JobId, Plan>, BTreeMap<JobId, Plan>, bool) {
        let nodes: Vec<_> = (1..=busy.len())
            .map(|i| serde_json::json!({"name": format!("n{i}"), "cpus": 4}))
            .collect();
        let cluster: ClusterConfig =
            serde_json::from_value(serde_json::json!({ "nodes": nodes })).unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let mut jobs: Vec<_> = busy
            .iter()
            .enumerate()
            .filter(|(_, seconds)| **seconds > 0)
            .map(|(i, seconds)| per_node(&format!("j{i}"), seconds * 1_000, 1, 4))
            .collect();
        jobs.push(per_node("head", 100_000, width, 4));
        s.tick(
            0,
            jobs.into_iter().map(|job| Event::Submit { job }).collect(),
        )
        .unwrap();
        s.tick(1, Vec::new()).unwrap();
        let before = plan_nodes(&s.last.plans);
        let mut reference = s.with_reference_pass();
        for (at, node) in (3..).zip(ends) {
            let ended = vec![Event::Finished {
                job: format!("j{node}"),
                outcome: crate::model::job::FinishOutcome::Completed,
            }];
            s.tick(at, ended.clone()).unwrap();
            reference.tick(at, ended).unwrap();
            assert_eq!(s.last.plans, reference.last.plans);
        }
        let (_, (kept, _, searched_unplaced), ..) = s.shortcuts_taken();
        assert_eq!(kept, 0, "a release leaves no plan kept without a search");
        (
            before,
            s.last.plans.clone(),
            reference.last.plans.clone(),
            searched_unplaced == 1,
        )
    }

    #[test]
    fn a_release_on_a_node_the_plan_does_not_reach_leaves_the_search_unplaced() {
        // n1 and n3 until 100 s, n2 until 200 s, n4 and n5 idle: "head" (four nodes) is planned
        // at 100 s on n1 and n3, busy now, then n4 and n5. n2's job ends: idle now and outside
        // the plan, it ranks behind every node of it.
        let (before, fast, reference, unplaced) =
            release_beside_a_plan(&[100, 200, 100, 0, 0], 4, &[1]);
        assert_eq!(before, [0, 2, 3, 4]);
        assert!(unplaced);
        assert_eq!(fast, reference);
        assert_eq!(plan_nodes(&fast), before);
    }

    #[test]
    fn a_release_on_a_node_of_a_plan_with_idle_nodes_leaves_the_search_unplaced() {
        // The same plan; n1's job ends: n1 is idle now, behind n3 (busy) and beside n4 and n5,
        // and n2, the one node busy now outside the plan, is busy at 100 s.
        let (before, fast, reference, unplaced) =
            release_beside_a_plan(&[100, 200, 100, 0, 0], 4, &[0]);
        assert!(unplaced);
        assert_eq!(fast, reference);
        assert_eq!(plan_nodes(&fast), before);
    }

    #[test]
    fn a_release_on_a_node_of_a_plan_of_busy_nodes_places_it_afresh() {
        // Three nodes busy until 100 s, "head" needs two: planned on n1 and n2, n3 passed by.
        // n1's job ends: idle now, n1 ranks behind n3, busy now and free at 100 s, which the
        // plan takes instead.
        let (before, fast, reference, unplaced) = release_beside_a_plan(&[100, 100, 100], 2, &[0]);
        assert_eq!(before, [0, 1]);
        assert!(!unplaced);
        assert_eq!(fast, reference);
        assert_eq!(plan_nodes(&fast), [1, 2]);
    }

    #[test]
    fn a_release_on_a_node_of_a_plan_of_busy_nodes_none_beside_it_can_use_leaves_it_unplaced() {
        // As above, but n3 is busy until 200 s, through the plan's window: when n1 turns idle,
        // no node busy now outside the plan has room, and the walk comes to n1 after n2.
        let (before, fast, reference, unplaced) = release_beside_a_plan(&[100, 100, 200], 2, &[0]);
        assert_eq!(before, [0, 1]);
        assert!(unplaced);
        assert_eq!(fast, reference);
        assert_eq!(plan_nodes(&fast), before);
    }

    #[test]
    fn a_plan_a_search_moved_is_taken_by_the_next_search_without_a_placement() {
        // As above with four nodes busy until 100 s and "head" needing three: the plan moves
        // from n1, n2 and n3 to n2, n3 and n4. n5 is busy until 200 s; its job ends, idle now
        // and outside the plan: the next search takes the moved plan as it is, a fresh
        // placement with it as the previous plan picking it again.
        let (before, fast, reference, unplaced) =
            release_beside_a_plan(&[100, 100, 100, 100, 200], 3, &[0, 4]);
        assert_eq!(before, [0, 1, 2]);
        assert!(unplaced);
        assert_eq!(fast, reference);
        assert_eq!(plan_nodes(&fast), [1, 2, 3]);
    }

    #[test]
    fn a_continued_pass_pins_again_after_gpu_jobs_change_the_mix() {
        // A hundred jobs of 0.4 GPU, after "h" in the order: against the new mix, device 1's
        // 0.1 left over is what 0.4 tasks cannot use, and "h" takes device 0.
        let s = half_gpu_planned_at_100_s("easy");
        let events = (0..100)
            .map(|i| Event::Submit {
                job: job(&format!("f{i}"), 0.4),
            })
            .collect();
        let (fast, reference) = devices_after(s, events);
        assert_eq!(reference, [0]);
        assert_eq!(fast, reference);
    }

    #[test]
    fn a_kept_plan_is_placed_again_after_gpu_jobs_change_the_mix() {
        // The same jobs, ranking first but waiting for their begin time: the pass runs in full
        // and books nothing before "h", whose plan still stands but is placed again.
        let s = half_gpu_planned_at_100_s("conservative");
        let events = (0..100)
            .map(|i| {
                let mut job = job(&format!("f{i}"), 0.4);
                job.priority = 1_000;
                job.begin_ms = Some(1_000_000);
                Event::Submit { job }
            })
            .collect();
        let (fast, reference) = devices_after(s, events);
        assert_eq!(reference, [0]);
        assert_eq!(fast, reference);
    }
}
