//! Seeded faults the simulator can inject: node failures, lost `stopped` acknowledgements,
//! duplicated events, reordered same-instant events, and starts that become ready late or
//! never (under `policy.wait_for_ready`, which evicts them).
//!
//! Node failures are a Poisson process per node: each node fails after an exponential time
//! with mean `node_mtbf_ms`, comes back `node_repair_ms` later, and fails again after a fresh
//! exponential time. The draws come from two xoshiro256++ generators seeded from `seed`, so a
//! seed gives the same faults on every run: one for the failure times, drawn in time order, so
//! that every policy simulated with a seed sees the same failures (until the workload is over),
//! and one for the per-event faults.

use crate::workload::dist::{self, Rng};

/// Mixed into the seed of the per-event generator, so that it draws another sequence than the
/// failure times' one.
const EVENTS_STREAM: u64 = 0x9e37_79b9_7f4a_7c15;

/// The fault model of a simulation.
///
/// ```
/// use gangway_sim::FaultOptions;
/// let faults = FaultOptions::standard(7);
/// assert_eq!(faults.seed, 7);
/// assert!(faults.reorder);
/// assert_eq!(FaultOptions::none(7).node_mtbf_ms, 0);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultOptions {
    /// Seed of the fault generator.
    pub seed: u64,
    /// Mean time between failures of one node, in ms; 0: nodes never fail.
    pub node_mtbf_ms: u64,
    /// How long a failed node stays down, in ms (at least 1).
    pub node_repair_ms: u64,
    /// Chance, in thousandths, that a preempted job never acknowledges its stop: the scheduler
    /// must kill it at grace expiry.
    pub lose_stopped_permille: u32,
    /// Chance, in thousandths, that an event is sent twice in its tick; the scheduler must
    /// refuse the copy (or accept it as a no-op) and change nothing.
    pub duplicate_permille: u32,
    /// Shuffle the events of each tick.
    pub reorder: bool,
    /// Chance, in thousandths, that a start becomes ready only `slow_ready_ms` after it
    /// (the simulator sends `ready` only under `policy.wait_for_ready`; other starts are ready
    /// 1 ms after they start).
    pub slow_ready_permille: u32,
    /// Chance, in thousandths, that a start never becomes ready.
    pub never_ready_permille: u32,
    /// How late a slow start becomes ready, in ms.
    pub slow_ready_ms: u64,
}

impl FaultOptions {
    /// No fault at all (each kind can then be switched on alone).
    pub fn none(seed: u64) -> Self {
        FaultOptions {
            seed,
            node_mtbf_ms: 0,
            node_repair_ms: 1,
            lose_stopped_permille: 0,
            duplicate_permille: 0,
            reorder: false,
            slow_ready_permille: 0,
            never_ready_permille: 0,
            slow_ready_ms: 3_600_000,
        }
    }

    /// The model of `gangway simulate --faults SEED`: each node fails once a week on average
    /// and is repaired in an hour, 10% of stop acknowledgements are lost, 1% of events are
    /// duplicated, every tick's events are shuffled, and under `policy.wait_for_ready` 5% of
    /// starts become ready an hour late and 1% never.
    pub fn standard(seed: u64) -> Self {
        FaultOptions {
            seed,
            node_mtbf_ms: 7 * 24 * 3_600_000,
            node_repair_ms: 3_600_000,
            lose_stopped_permille: 100,
            duplicate_permille: 10,
            reorder: true,
            slow_ready_permille: 50,
            never_ready_permille: 10,
            slow_ready_ms: 3_600_000,
        }
    }
}

/// The fault generator of one simulation.
pub(crate) struct Faults {
    options: FaultOptions,
    /// Draws failure times.
    nodes: Rng,
    /// Draws the per-event faults.
    events: Rng,
}

impl Faults {
    pub(crate) fn new(options: FaultOptions) -> Self {
        Faults {
            nodes: dist::seeded(options.seed),
            events: dist::seeded(options.seed ^ EVENTS_STREAM),
            options,
        }
    }

    /// Time until a node that is up fails; `None` when nodes never fail.
    pub(crate) fn time_to_failure(&mut self) -> Option<u64> {
        let mean = self.options.node_mtbf_ms;
        (mean > 0).then(|| (dist::exponential(&mut self.nodes, mean as f64) as u64).max(1))
    }

    /// How long a failed node stays down.
    pub(crate) fn repair_ms(&self) -> u64 {
        self.options.node_repair_ms.max(1)
    }

    /// Whether this preemption's `stopped` is lost.
    pub(crate) fn lose_stopped(&mut self) -> bool {
        self.chance(self.options.lose_stopped_permille)
    }

    /// Whether this event is sent twice.
    pub(crate) fn duplicate(&mut self) -> bool {
        self.chance(self.options.duplicate_permille)
    }

    /// A random order of `len` items (the identity when reordering is off).
    pub(crate) fn order(&mut self, len: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..len).collect();
        if self.options.reorder {
            for i in (1..len).rev() {
                let j = ((dist::uniform(&mut self.events) * (i + 1) as f64) as usize).min(i);
                order.swap(i, j);
            }
        }
        order
    }

    /// How long after its start a start becomes ready: 1 ms, `slow_ready_ms`, or never.
    pub(crate) fn ready_delay(&mut self) -> Option<u64> {
        let (never, slow) = (
            self.options.never_ready_permille,
            self.options.slow_ready_permille,
        );
        if never == 0 && slow == 0 {
            return Some(1);
        }
        let draw = dist::uniform(&mut self.events) * 1000.0;
        if draw < f64::from(never) {
            None
        } else if draw < f64::from(never) + f64::from(slow) {
            Some(self.options.slow_ready_ms.max(1))
        } else {
            Some(1)
        }
    }

    fn chance(&mut self, permille: u32) -> bool {
        permille > 0 && dist::uniform(&mut self.events) * 1000.0 < f64::from(permille)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_faults() {
        let draw = |seed| {
            let mut f = Faults::new(FaultOptions::standard(seed));
            (
                f.time_to_failure(),
                f.order(8),
                f.lose_stopped(),
                f.duplicate(),
            )
        };
        assert_eq!(draw(3), draw(3));
        assert_ne!(draw(3).0, draw(4).0);
    }

    #[test]
    fn failure_times_do_not_depend_on_event_faults() {
        let mut quiet = Faults::new(FaultOptions::standard(5));
        let mut busy = Faults::new(FaultOptions::standard(5));
        let first = quiet.time_to_failure();
        for _ in 0..10 {
            busy.duplicate();
            busy.order(5);
        }
        assert_eq!(busy.time_to_failure(), first);
    }

    #[test]
    fn switched_off_faults_never_happen() {
        let mut f = Faults::new(FaultOptions::none(1));
        assert_eq!(f.time_to_failure(), None);
        assert_eq!(f.order(4), vec![0, 1, 2, 3]);
        assert!((0..100).all(|_| !f.lose_stopped() && !f.duplicate()));
        assert!((0..100).all(|_| f.ready_delay() == Some(1)));
    }

    #[test]
    fn slow_and_never_ready_starts_come_at_their_rates() {
        let mut f = Faults::new(FaultOptions {
            slow_ready_permille: 200,
            never_ready_permille: 100,
            slow_ready_ms: 77,
            ..FaultOptions::none(4)
        });
        let draws: Vec<Option<u64>> = (0..10_000).map(|_| f.ready_delay()).collect();
        let never = draws.iter().filter(|d| d.is_none()).count();
        let slow = draws.iter().filter(|d| **d == Some(77)).count();
        assert!((800..1_200).contains(&never), "{never}");
        assert!((1_700..2_300).contains(&slow), "{slow}");
    }

    #[test]
    fn a_shuffle_is_a_permutation() {
        let mut f = Faults::new(FaultOptions::standard(9));
        let mut order = f.order(50);
        order.sort_unstable();
        assert_eq!(order, (0..50).collect::<Vec<_>>());
    }
}
