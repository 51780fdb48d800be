//! Slurm's `PriorityCalcPeriod` (`policy.priority.calc_period_ms`, opt-in): the order keys are
//! calculated once a period instead of at every pass.
//!
//! Without the setting every pass keys every pending job afresh with the figures of its own
//! time (age, decayed fair-share): exact, and a walk of the whole queue plus a Fair Tree
//! evaluation per pass. With it, a **calculation** takes the pass figures (totals, normalisers,
//! fair-share factors) at the first pass at least a period after the last one, and every
//! pending job's key is computed once against those figures: at the calculation, or at the
//! first pass that sees it pending since (a new or requeued job). Until the next calculation a
//! job keeps its key; a `set_priority` on it re-keys it at the next pass (its base priority is
//! part of the key), and `reconfigure` starts a new calculation. Every hook of a pass other
//! than the order keys (admission votes, filters, scorers, `prepare`) sees the pass's own time
//! and totals with the calculation's fair-share factors, which are what the period saves.
//!
//! The keys and the calculation's figures are part of a snapshot, so a restored scheduler
//! orders exactly like the uninterrupted one.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::model::ids::JobId;
use crate::policy::PassFigures;
use crate::scheduler::pass::order::OrderKey;
use crate::state::{ClusterState, JobView};

/// The last calculation: its figures and the keys computed against them.
#[derive(Clone, Debug, PartialEq)]
pub(in crate::scheduler) struct PriorityCalc {
    /// The figures of the calculation (its time among them).
    figures: Arc<PassFigures>,
    /// Keys by job index: the job's base priority when keyed, and its key (whose last element
    /// is the job's arrival, unique to one submission, so an entry left by a job whose id was
    /// reused, or whose priority was set since, is not taken).
    keys: Vec<Option<(i32, OrderKey)>>,
}

impl PriorityCalc {
    /// A calculation at `now` over `state`: fresh figures, no job keyed yet.
    pub(in crate::scheduler) fn new(state: &ClusterState, now: u64) -> Self {
        PriorityCalc {
            figures: Arc::new(PassFigures::new(state, now)),
            keys: Vec::new(),
        }
    }

    /// Whether a pass at `now` must calculate anew, with period `period_ms`.
    pub(in crate::scheduler) fn due(&self, now: u64, period_ms: u64) -> bool {
        now >= self.figures.now_ms().saturating_add(period_ms)
    }

    /// The figures keys are computed against.
    pub(in crate::scheduler) fn figures(&self) -> &Arc<PassFigures> {
        &self.figures
    }

    /// The key kept for `job`, if it was keyed in this calculation as it is now.
    pub(in crate::scheduler) fn key(&self, job: JobView<'_>) -> Option<OrderKey> {
        let record = job.record();
        self.keys
            .get(job.id().index())
            .copied()
            .flatten()
            .filter(|(priority, key)| *priority == record.spec.priority && key.3 == record.arrival)
            .map(|(_, key)| key)
    }

    /// Keeps `key` for `job` until the next calculation.
    pub(in crate::scheduler) fn keep(&mut self, job: JobView<'_>, key: OrderKey) {
        let index = job.id().index();
        if self.keys.len() <= index {
            self.keys.resize(index + 1, None);
        }
        self.keys[index] = Some((job.record().spec.priority, key));
    }

    /// The snapshot's form: the figures and the kept keys by job.
    pub(in crate::scheduler) fn saved(&self) -> SavedCalc {
        SavedCalc {
            figures: PassFigures::clone(&self.figures),
            keys: self
                .keys
                .iter()
                .enumerate()
                .filter_map(|(index, entry)| Some((JobId(index as u32), (*entry)?)))
                .collect(),
        }
    }

    /// Back from a snapshot's form; entries for ids that name no job in `state` are dropped
    /// (they could never be taken), so a damaged snapshot cannot make the table huge.
    pub(in crate::scheduler) fn restored(saved: SavedCalc, state: &ClusterState) -> Self {
        let mut calc = PriorityCalc {
            figures: Arc::new(saved.figures),
            keys: Vec::new(),
        };
        for (id, (priority, key)) in saved.keys {
            if let Some(job) = state.job_view(id) {
                calc.keep(job, key);
                if let Some(entry) = calc.keys.get_mut(id.index()) {
                    *entry = Some((priority, key));
                }
            }
        }
        calc
    }
}

/// A calculation as a snapshot stores it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(in crate::scheduler) struct SavedCalc {
    figures: PassFigures,
    keys: Vec<(JobId, (i32, OrderKey))>,
}

#[cfg(test)]
mod tests {
    use crate::{ClusterConfig, Event, JobSpec, Scheduler};

    /// A node of one cpu that `run` fills from 0, keys calculated once every 10 s; `a`
    /// (priority 0) and `b` (5) wait from 1,000.
    fn two_waiting() -> Scheduler {
        let mut cluster: ClusterConfig =
            serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
        cluster.policy.priority.calc_period_ms = Some(10_000);
        let mut s = Scheduler::new(cluster).unwrap();
        let run = JobSpec::new("run", 3_600_000, 1);
        s.tick(0, vec![Event::Submit { job: run }]).unwrap();
        let jobs = [("a", 0), ("b", 5)]
            .map(|(name, priority)| Event::Submit {
                job: JobSpec::new(name, 60_000, 1).with_priority(priority),
            })
            .to_vec();
        s.tick(1_000, jobs).unwrap();
        s
    }

    fn order(s: &Scheduler) -> Vec<&str> {
        let context = s.last.figures.context(&s.state);
        s.ordered_pending(&context)
            .into_iter()
            .map(|id| s.state.job_name(id).unwrap())
            .collect()
    }

    #[test]
    fn a_job_keeps_its_key_until_the_next_calculation_unless_its_priority_is_set() {
        let mut s = two_waiting();
        let calculated = |s: &Scheduler| s.last.priority_calc.as_ref().unwrap().figures().now_ms();
        assert_eq!(calculated(&s), 0);
        assert_eq!(order(&s), ["b", "a"]);
        // Within the period the calculation stands; `a`'s new priority re-keys it.
        let raise = Event::SetPriority {
            job: "a".into(),
            priority: 9,
        };
        s.tick(9_999, vec![raise]).unwrap();
        assert_eq!(calculated(&s), 0);
        assert_eq!(order(&s), ["a", "b"]);
        let a = s.state.job_view(s.state.job_id("a").unwrap()).unwrap();
        let kept = s.last.priority_calc.as_ref().unwrap().key(a).unwrap();
        let context = s.last.figures.context(&s.state);
        assert_eq!(kept, s.order_key(a, &context));
        // A period after the last calculation, the next.
        s.tick(10_000, Vec::new()).unwrap();
        assert_eq!(calculated(&s), 10_000);
    }
}
