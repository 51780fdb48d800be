//! Running jobs sorted by their order, once per pass, for order-based preemption.
//!
//! Order-based preemption lets a pending job take any running job whose order (partition tier,
//! then the profile's order keys) is strictly lower than its own. Where the profile's keys are
//! fixed for a pass ([`crate::policy::Profile`]'s `order_keys_fixed_in_pass`), the running
//! jobs' keys are computed at the pass's first such search and sorted: the jobs a preemptor
//! outranks are then a suffix of the sorted list, found by bisection, instead of every running
//! job's key compared at every search. A shortcut (the reference pass computes every key at
//! every search); debug builds check the kept keys against fresh ones.

use std::cmp::Reverse;
use std::sync::Arc;

use crate::model::ids::JobId;
use crate::policy::{OrderKeys, PassFigures};
use crate::scheduler::Scheduler;

/// A job's order as order-based preemption compares it: its partition tier, then the profile's
/// keys (lower first).
pub(in crate::scheduler) type RankKey = (Reverse<i32>, Reverse<OrderKeys>);

/// The running jobs of one pass by their [`RankKey`], computed at the pass's first order-based
/// search. A job started later in the pass is missing (it started in this tick: never a victim),
/// and one stopped later is still listed (the search skips jobs no longer running).
#[derive(Debug, Default)]
pub(in crate::scheduler) struct RunningKeys {
    /// The figures of the pass the keys belong to (compared by identity: each pass makes its
    /// own).
    figures: Option<Arc<PassFigures>>,
    /// The running jobs by key, then job id.
    sorted: Vec<(RankKey, JobId)>,
}

impl RunningKeys {
    /// The running jobs whose order is strictly lower than `key`'s, in job order.
    pub(in crate::scheduler) fn outranked_by(&self, key: &RankKey) -> Vec<JobId> {
        let first = self.sorted.partition_point(|(k, _)| k <= key);
        let mut jobs: Vec<JobId> = self.sorted[first..].iter().map(|(_, v)| *v).collect();
        jobs.sort_unstable();
        jobs
    }
}

impl Scheduler {
    /// The running jobs' keys for this pass, sorted at its first call; `None` where keys are
    /// not fixed for a pass or the pass runs without shortcuts.
    pub(in crate::scheduler) fn running_keys<'k>(
        &self,
        kept: &'k mut RunningKeys,
    ) -> Option<&'k RunningKeys> {
        if !self.shortcuts || !self.profile.order_keys_fixed_in_pass() {
            return None;
        }
        let current = kept
            .figures
            .as_ref()
            .is_some_and(|f| Arc::ptr_eq(f, &self.last.figures));
        if !current {
            let context = self.last.figures.context(&self.state);
            let mut sorted: Vec<(RankKey, JobId)> = self
                .state
                .running
                .iter()
                .filter_map(|&v| {
                    let (tier, keys, ..) = self.pass_key(self.state.job_view(v)?, &context);
                    Some(((tier, keys), v))
                })
                .collect();
            sorted.sort_unstable();
            *kept = RunningKeys {
                figures: Some(Arc::clone(&self.last.figures)),
                sorted,
            };
        }
        debug_assert!(self.keys_still_hold(kept), "a kept running key changed");
        Some(kept)
    }

    /// Whether every kept key equals the one computed now (a debug-build check).
    fn keys_still_hold(&self, kept: &RunningKeys) -> bool {
        let context = self.last.figures.context(&self.state);
        kept.sorted.iter().all(|(key, v)| {
            self.state.job_view(*v).is_none_or(|job| {
                let (tier, keys, ..) = self.pass_key(job, &context);
                (tier, keys) == *key
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Profile;
    use crate::policy::builtin::ShortestFirst;
    use crate::scheduler::pass::preempt::test_plugins::ByPriority;
    use crate::{ClusterConfig, Event, JobSpec};

    /// The key of a job of partition tier `tier` whose first order key is `first`.
    fn rank(tier: i32, first: i64) -> RankKey {
        (Reverse(tier), Reverse([first, 0, 0, 0]))
    }

    /// Kept keys of running jobs 0 to 4, sorted as [`Scheduler::running_keys`] sorts them.
    fn kept() -> RunningKeys {
        let mut sorted = vec![
            (rank(1, 0), JobId(4)),
            (rank(0, 9), JobId(3)),
            (rank(0, 5), JobId(0)),
            (rank(0, 5), JobId(2)),
            (rank(0, 1), JobId(1)),
        ];
        sorted.sort_unstable();
        RunningKeys {
            figures: None,
            sorted,
        }
    }

    #[test]
    fn a_key_outranks_the_jobs_strictly_below_it_listed_by_job_id() {
        let kept = kept();
        // Below a job of the higher tier: every job of the lower one.
        assert_eq!(
            kept.outranked_by(&rank(1, 0)),
            [JobId(0), JobId(1), JobId(2), JobId(3)]
        );
        // An equal order is not outranked.
        assert_eq!(kept.outranked_by(&rank(0, 5)), [JobId(1)]);
        assert_eq!(
            kept.outranked_by(&rank(0, 6)),
            [JobId(0), JobId(1), JobId(2)]
        );
        // The lowest key outranks nobody; one above every key outranks all.
        assert!(kept.outranked_by(&rank(0, 1)).is_empty());
        assert!(kept.outranked_by(&rank(0, -1)).is_empty());
        assert_eq!(
            kept.outranked_by(&rank(2, 0)),
            [JobId(0), JobId(1), JobId(2), JobId(3), JobId(4)]
        );
    }

    /// A 4-cpu node and order-based preemption under `profile`: jobs `t1` to `t4`, one cpu
    /// each with time limits of 1 to 4 minutes, run.
    fn four_running(profile: Profile) -> Scheduler {
        let mut cluster: ClusterConfig =
            serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 4}]}"#).unwrap();
        cluster.policy.preemption.enabled = true;
        cluster.policy.preemption.order_based = true;
        let mut s = Scheduler::with_profile(cluster, profile).unwrap();
        let jobs = (1..=4)
            .map(|m| Event::Submit {
                job: JobSpec::new(format!("t{m}"), m * 60_000, 1),
            })
            .collect();
        s.tick(0, jobs).unwrap();
        assert_eq!(s.state.running.len(), 4);
        s
    }

    fn shortest_first() -> Profile {
        Profile::builder().plugin(ShortestFirst).build().unwrap()
    }

    fn id(s: &Scheduler, name: &str) -> JobId {
        s.state.job_id(name).unwrap()
    }

    /// Job `name`'s [`RankKey`] in the last pass.
    fn rank_of(s: &Scheduler, name: &str) -> RankKey {
        let context = s.last.figures.context(&s.state);
        let (tier, keys, ..) = s.pass_key(s.state.job_view(id(s, name)).unwrap(), &context);
        (tier, keys)
    }

    fn ids(s: &Scheduler, names: &[&str]) -> Vec<JobId> {
        names.iter().map(|name| id(s, name)).collect()
    }

    #[test]
    fn the_running_jobs_keys_are_sorted_at_a_pass_s_first_search_and_kept_for_the_pass() {
        let mut s = four_running(shortest_first());
        // Shortest first: the shorter job ranks higher.
        assert!(rank_of(&s, "t1") < rank_of(&s, "t2"));
        let mut kept = RunningKeys::default();
        let keys = s
            .running_keys(&mut kept)
            .expect("built-in order keys are kept");
        assert_eq!(
            keys.outranked_by(&rank_of(&s, "t1")),
            ids(&s, &["t2", "t3", "t4"])
        );
        assert_eq!(keys.outranked_by(&rank_of(&s, "t3")), ids(&s, &["t4"]));
        assert!(keys.outranked_by(&rank_of(&s, "t4")).is_empty());
        assert_eq!(kept.sorted.len(), 4);
        // Later searches of the same pass read the kept list as it is (here emptied by hand).
        kept.sorted.clear();
        let keys = s.running_keys(&mut kept).unwrap();
        assert!(keys.outranked_by(&rank_of(&s, "t1")).is_empty());
        // A new pass sorts them again.
        s.last.figures = Arc::new(PassFigures::new(&s.state, s.state.now_ms));
        let keys = s.running_keys(&mut kept).unwrap();
        assert_eq!(
            keys.outranked_by(&rank_of(&s, "t2")),
            ids(&s, &["t3", "t4"])
        );
        assert!(Arc::ptr_eq(kept.figures.as_ref().unwrap(), &s.last.figures));
    }

    #[test]
    fn no_keys_are_kept_without_shortcuts_or_under_an_order_plug_in_of_the_host_s() {
        let s = four_running(shortest_first());
        let mut kept = RunningKeys::default();
        assert!(s.with_reference_pass().running_keys(&mut kept).is_none());
        let s = four_running(Profile::builder().plugin(ByPriority).build().unwrap());
        assert!(!s.profile.order_keys_fixed_in_pass());
        assert!(s.running_keys(&mut kept).is_none());
        assert!(kept.sorted.is_empty());
    }

    #[test]
    fn kept_keys_hold_while_each_equals_the_one_computed_now() {
        let s = four_running(shortest_first());
        let mut kept = RunningKeys::default();
        s.running_keys(&mut kept).unwrap();
        assert!(s.keys_still_hold(&kept));
        // `t1` kept with `t2`'s key: it no longer holds.
        let (t1, t2) = (id(&s, "t1"), id(&s, "t2"));
        let key_of_t2 = kept.sorted.iter().find(|(_, v)| *v == t2).unwrap().0;
        let t1_at = kept.sorted.iter().position(|(_, v)| *v == t1).unwrap();
        kept.sorted[t1_at].0 = key_of_t2;
        assert!(!s.keys_still_hold(&kept));
    }
}
