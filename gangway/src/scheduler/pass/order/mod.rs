//! Step 5 of a pass: order pending jobs by partition tier, then the profile's order keys
//! (lexicographic, highest first), then submit time, then arrival; and collect the admission
//! plug-ins' denials. The keys are computed at every pass, or once a period
//! ([`calc_period`]).

pub(in crate::scheduler) mod admission_fair_sharing;
pub(in crate::scheduler) mod calc_period;
pub(in crate::scheduler) mod fair_sharing;
pub(in crate::scheduler) mod lazy;
pub(in crate::scheduler) mod slots;

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::model::ids::JobId;
use crate::placement::FreeTotals;
use crate::policy::{OrderKeys, PassContext};
use crate::scheduler::Scheduler;
use crate::scheduler::pass::order::admission_fair_sharing::FairQueues;
use crate::scheduler::shortcuts::settled::PendingSummary;
use crate::state::JobView;

/// The sort key of a pending job: partition tier and order keys (highest first), submit time,
/// arrival (unique, so the order is total).
pub(in crate::scheduler) type OrderKey = (Reverse<i32>, Reverse<OrderKeys>, u64, u64);

impl Scheduler {
    /// Every pending job's sort key at `now_ms`, unsorted (the pass sorts only as far as it
    /// reads: [`crate::scheduler::pass::order::lazy::LazyOrder`]), what the pass needs to know of them all, and
    /// the admission plug-ins' denials.
    pub(in crate::scheduler) fn keyed_pending(
        &mut self,
        now_ms: u64,
    ) -> (
        Vec<(OrderKey, JobId)>,
        PendingSummary,
        BTreeMap<JobId, String>,
    ) {
        // Between calculations, a job keeps the key it got against the calculation's figures.
        let mut calc = self.last.priority_calc.take();
        let calc_figures = calc.as_ref().map(|calc| Arc::clone(calc.figures()));
        let key_figures = calc_figures.as_ref().unwrap_or(&self.last.figures);
        let key_context = key_figures.context(&self.state);
        let context = self.last.figures.context(&self.state);
        let mut summary = PendingSummary {
            need: FreeTotals::floor(),
            all_queued: true,
            next_begin_ms: None,
        };
        let mut denied = BTreeMap::new();
        // Sized up front: a queue of 10,000 would otherwise be copied a dozen times as it grows.
        let mut keyed: Vec<(OrderKey, JobId)> = Vec::with_capacity(self.state.pending.len());
        keyed.extend(self.state.pending.iter().filter_map(|&id| {
            let view = self.state.job_view(id)?;
            let job = view.record();
            summary.need.include(&job.totals.need);
            summary.all_queued &= job.queue.is_some();
            let backoff = job.ready.backoff_until_ms;
            for begin in [job.spec.begin_ms, backoff].into_iter().flatten() {
                if begin > now_ms {
                    summary.next_begin_ms =
                        Some(summary.next_begin_ms.map_or(begin, |n| n.min(begin)));
                }
            }
            if let Some(reason) = self.profile.admission(view, &context) {
                denied.insert(id, reason);
            }
            let key = match calc.as_mut() {
                Some(calc) => calc.key(view).unwrap_or_else(|| {
                    let key = self.order_key(view, &key_context);
                    calc.keep(view, key);
                    key
                }),
                None => self.order_key(view, &key_context),
            };
            Some((key, id))
        }));
        self.last.priority_calc = calc;
        // A plug-in silenced part-way keys no job, so the keys compare alike.
        for slot in self.profile.order_silenced() {
            for ((_, Reverse(keys), ..), _) in &mut keyed {
                keys[slot] = 0;
            }
        }
        (keyed, summary, denied)
    }

    /// The job's sort key in the pass of `context`.
    pub(in crate::scheduler) fn order_key(
        &self,
        job: JobView<'_>,
        context: &PassContext<'_>,
    ) -> OrderKey {
        let record = job.record();
        let tier = self.state.partitions[record.partition.index()].priority_tier;
        let keys = self.profile.order_keys(job, context);
        (
            Reverse(tier),
            Reverse(keys),
            record.submit_ms,
            record.arrival,
        )
    }

    /// The key `job` is ordered by in a pass of `context`: the one kept from the last
    /// calculation under `policy.priority.calc_period_ms` (computed against its figures if the
    /// job has none yet), else the one of `context`.
    pub(in crate::scheduler) fn pass_key(
        &self,
        job: JobView<'_>,
        context: &PassContext<'_>,
    ) -> OrderKey {
        match &self.last.priority_calc {
            Some(calc) => calc
                .key(job)
                .unwrap_or_else(|| self.order_key(job, &calc.figures().context(&self.state))),
            None => self.order_key(job, context),
        }
    }

    /// Pending jobs in the order a pass of `context` considers them (admission-fair-sharing
    /// queues' slots in their order as of now, before any start).
    pub(in crate::scheduler) fn ordered_pending(&self, context: &PassContext<'_>) -> Vec<JobId> {
        let mut keyed: Vec<(OrderKey, JobId)> = self
            .state
            .pending()
            .map(|job| (self.pass_key(job, context), job.id()))
            .collect();
        keyed.sort_unstable_by_key(|(key, _)| *key);
        if self.state.admission_fair_sharing() {
            FairQueues::new(&keyed, &self.state).fill_slots(&mut keyed);
        }
        keyed.into_iter().map(|(_, id)| id).collect()
    }
}
