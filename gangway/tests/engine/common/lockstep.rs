//! Several schedulers ticked through one stream in lockstep (feature `testkit`), to show that
//! two profiles decide alike.

use gangway::policy::Profile;
use gangway::testkit::checked_tick;
use gangway::testkit::harness::{Stream, resolve};
use gangway::{ClusterConfig, Scheduler};

/// Ticks one scheduler per profile through `stream`, the oracle on after every tick, and
/// compares each tick's outcome and the `explain` that follows it with the first scheduler's.
/// `Err` names the tick and both answers at the first difference. A cluster the first
/// profile's scheduler refuses must be refused by all, and compares nothing else.
pub fn same_decisions(
    config: &ClusterConfig,
    profiles: Vec<Profile>,
    stream: &Stream,
) -> Result<(), String> {
    let built: Vec<_> = profiles
        .into_iter()
        .map(|p| Scheduler::with_profile(config.clone(), p))
        .collect();
    if built.iter().all(Result::is_err) {
        return Ok(());
    }
    let mut schedulers = built
        .into_iter()
        .collect::<Result<Vec<Scheduler>, _>>()
        .map_err(|e| format!("one profile's scheduler refused the cluster: {e}"))?;
    for step in &stream.ticks {
        let events = resolve(&schedulers[0], &step.events);
        let mut first = None;
        for (i, scheduler) in schedulers.iter_mut().enumerate() {
            let outcome = checked_tick(scheduler, step.at_ms, events.clone())
                .map_err(|e| format!("tick at {} ms refused: {e}", step.at_ms))?;
            let answer = (outcome, scheduler.explain());
            match &first {
                None => first = Some(answer),
                Some(expected) if *expected != answer => {
                    return Err(format!(
                        "at {} ms, profile {i} decided {answer:?}; profile 0 decided {expected:?}",
                        step.at_ms
                    ));
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}
