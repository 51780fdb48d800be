//! The policy surface, one behaviour per test: admission, order, node filters and scores,
//! victim vetoes and order, order-based preemption and anti-thrash, wake-ups, observation,
//! plug-in state across snapshots, panicking plug-ins, CLUSTER's `policy.plugins`, and each
//! plug-in of the zoo. Every tick goes through the invariant oracle.

use crate::common;

use std::sync::{Arc, Mutex};

use common::build::{config, event, finished, submit};
use common::decisions::{pending, placement, started};
use common::shim::send;
use gangway::RestoreError;
use gangway::policy::PluginSpec;
use gangway::policy::builtin::{
    AvoidGpuFaults, BinPack, Las, LeastFragmenting, LeastLostWork, MinRunTime, ShortestFirst,
    Spread, kueue_victims,
};
use gangway::policy::{
    FaultKind, FnPlugin, Hook, PassContext, Plugin, PluginFault, Profile, ProfileBuilder, Registry,
    Veto, Vote, report_fault,
};
use gangway::protocol::Shim;
use gangway::state::{JobView, NodeView};
use gangway::testkit::checked_tick;
use gangway::testkit::strategies::scenario;
use gangway::{
    ClusterConfig, Decision, Event, JobSpec, Milli, PendingReason, Scheduler, TickOutcome,
};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use serde_json::{Value, json};

/// The order key `priority`: the job's base priority.
fn by_priority() -> FnPlugin {
    FnPlugin::new("priority").order_key(|job, _| i64::from(job.spec().priority))
}

/// A node score from a table by node name (0 for nodes it does not list).
fn table(name: &'static str, scores: &[(&'static str, f64)]) -> FnPlugin {
    let scores = scores.to_vec();
    FnPlugin::new(name).score_node(move |_, _, node, _| {
        scores
            .iter()
            .find(|(n, _)| *n == node.name())
            .map_or(0.0, |(_, s)| *s)
    })
}

fn build(builder: ProfileBuilder) -> Profile {
    builder.build().unwrap()
}

fn with(cluster: Value, profile: Profile) -> Scheduler {
    Scheduler::with_profile(config(cluster), profile).unwrap()
}

fn tick(s: &mut Scheduler, at_ms: u64, events: Vec<Event>) -> TickOutcome {
    let out = checked_tick(s, at_ms, events).unwrap();
    assert!(out.rejected.is_empty(), "{:?}", out.rejected);
    out
}

/// A job of `cpus` one-cpu tasks for an hour.
fn cpus(id: &str, cpus: u32) -> Event {
    submit(JobSpec::new(id, 3_600_000, cpus))
}

/// A one-task job of `gpus` GPUs for an hour.
fn gpus(id: &str, gpus: u64) -> Event {
    submit(JobSpec::new(id, 3_600_000, 1).with_gpus(Milli::from_units(gpus)))
}

/// A one-cpu job of base priority `priority` for an hour.
fn prio(id: &str, priority: i32) -> Event {
    submit(JobSpec::new(id, 3_600_000, 1).with_priority(priority))
}

fn in_partition(id: &str, partition: &str, gpu_count: u64) -> Event {
    let mut job = JobSpec::new(id, 3_600_000, 1).with_gpus(Milli::from_units(gpu_count));
    job.partition = Some(partition.into());
    submit(job)
}

fn node_of<'a>(out: &'a TickOutcome, job: &str) -> &'a str {
    let placement = placement(&out.decisions, job).unwrap_or_else(|| panic!("{job} not started"));
    &placement[0].node
}

fn preempts(out: &TickOutcome) -> Vec<(&str, &str)> {
    out.decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Preempt { job, for_job, .. } => Some((job.as_str(), for_job.as_str())),
            _ => None,
        })
        .collect()
}

fn order(s: &Scheduler) -> Vec<String> {
    s.pending_info().into_iter().map(|p| p.job).collect()
}

/// One node of `cpus` cpus.
fn one_node(cpus: u32) -> Value {
    json!({"nodes": [{"name": "n1", "cpus": cpus}]})
}

/// GPU nodes of these sizes, `n1`, `n2`, …, 16 cpus each.
fn gpu_nodes(sizes: &[u32]) -> Vec<Value> {
    sizes
        .iter()
        .enumerate()
        .map(|(i, count)| {
            json!({"name": format!("n{}", i + 1), "cpus": 16,
                   "gpus": {"model": "a100", "count": count}})
        })
        .collect()
}

/// `n1` with 2 GPUs and `n2` with 4: best fit puts a one-GPU job on `n1`.
fn two_gpu_nodes() -> Value {
    json!({"nodes": gpu_nodes(&[2, 4])})
}

/// Order-based preemption on, anti-thrash as given.
fn order_based(mut cluster: Value, anti_thrash: bool) -> Value {
    cluster["policy"] = json!({"preemption": {"enabled": true, "order_based": true,
                                              "anti_thrash": anti_thrash}});
    cluster
}

// ---------------------------------------------------------------------------------------------
// Admission

#[test]
fn a_deny_keeps_the_job_waiting_with_reason_admission_and_its_message() {
    let budget = FnPlugin::new("budget").admit(|job, _| match job.name() {
        "denied" => Vote::Deny("over budget".into()),
        _ => Vote::Abstain,
    });
    let mut s = with(one_node(4), build(Profile::builder().plugin(budget)));
    let out = tick(&mut s, 0, vec![cpus("denied", 1)]);
    assert!(out.decisions.is_empty(), "{:?}", out.decisions);
    let info = pending(&s, "denied");
    assert_eq!(info.reason, PendingReason::Admission);
    assert_eq!(info.detail.as_deref(), Some("budget: over budget"));
    // Still denied at the next pass, with the same message.
    tick(&mut s, 1_000, vec![]);
    assert_eq!(
        pending(&s, "denied").detail.as_deref(),
        Some("budget: over budget")
    );
}

#[test]
fn a_denied_job_blocks_nobody_even_without_backfill() {
    // Without backfill a head waiting for resources blocks every later job; a denied head
    // blocks nobody.
    let cluster = json!({"nodes": [{"name": "n1", "cpus": 4}],
                         "policy": {"backfill": {"mode": "none"}}});
    let later_starts = |deny: bool| {
        let budget = FnPlugin::new("budget").admit(move |job, _| match job.name() {
            "head" if deny => Vote::Deny("no".into()),
            _ => Vote::Abstain,
        });
        let mut s = with(cluster.clone(), build(Profile::builder().plugin(budget)));
        tick(&mut s, 0, vec![cpus("running", 2)]);
        let out = tick(&mut s, 1_000, vec![cpus("head", 4), cpus("later", 2)]);
        let reason = pending(&s, "head").reason;
        (started(&out.decisions) == ["later"], reason)
    };
    assert_eq!(later_starts(false), (false, PendingReason::Resources));
    assert_eq!(later_starts(true), (true, PendingReason::Admission));
}

#[test]
fn the_first_deny_is_shown_and_any_deny_rejects() {
    let a = FnPlugin::new("a").admit(|_, _| Vote::Permit);
    let b = FnPlugin::new("b").admit(|_, _| Vote::Deny("b says no".into()));
    let c = FnPlugin::new("c").admit(|_, _| Vote::Deny("c says no".into()));
    let mut s = with(
        one_node(4),
        build(Profile::builder().plugin(a).plugin(b).plugin(c)),
    );
    tick(&mut s, 0, vec![cpus("j", 1)]);
    let info = pending(&s, "j");
    assert_eq!(info.reason, PendingReason::Admission);
    assert_eq!(info.detail.as_deref(), Some("b: b says no"));
}

#[test]
fn permit_and_abstain_change_nothing() {
    // A permit never overrides a hold.
    let permit = || FnPlugin::new("permit").admit(|_, _| Vote::Permit);
    let abstain = || FnPlugin::new("abstain").admit(|_, _| Vote::Abstain);
    let mut s = with(one_node(4), build(Profile::builder().plugin(permit())));
    tick(
        &mut s,
        0,
        vec![
            cpus("held", 1),
            event(json!({"type": "hold", "job": "held"})),
        ],
    );
    assert_eq!(pending(&s, "held").reason, PendingReason::Held);

    // On random clusters and streams, the default profile with a plug-in that permits every
    // job and one that abstains decides exactly as the default profile alone. (The whole
    // default profile, its device plug-ins included: a case with NVLink islands, drawn once the
    // clusters also drew the head rules, showed that a profile without them chooses other
    // devices.)
    let with_votes = || {
        Profile::default_for_config()
            .into_builder()
            .plugin(permit())
            .plugin(abstain())
            .build()
            .unwrap()
    };
    let mut runner = TestRunner::deterministic();
    for _ in 0..24 * gangway::testkit::harness::scale() {
        let (cluster, stream) = scenario(30).new_tree(&mut runner).unwrap().current();
        let profiles = vec![Profile::default_for_config(), with_votes()];
        common::lockstep::same_decisions(&cluster, profiles, &stream)
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

// ---------------------------------------------------------------------------------------------
// Order

/// A key per job name from a table (0 for names it does not list).
fn keys(name: &'static str, keys: &[(&'static str, i64)]) -> FnPlugin {
    let keys = keys.to_vec();
    FnPlugin::new(name).order_key(move |job, _| {
        keys.iter()
            .find(|(n, _)| *n == job.name())
            .map_or(0, |(_, k)| *k)
    })
}

#[test]
fn order_plugins_combine_lexicographically_in_listed_order() {
    let first = || keys("first", &[("x1", 1), ("x2", 1), ("y", 2)]);
    let second = || keys("second", &[("x1", 0), ("x2", 5), ("y", -100)]);
    let order_of = |profile: Profile| {
        let mut s = with(one_node(1), profile);
        tick(&mut s, 0, vec![cpus("blocker", 1)]);
        tick(
            &mut s,
            1_000,
            vec![cpus("x1", 1), cpus("x2", 1), cpus("y", 1)],
        );
        order(&s)
    };
    let profile = build(Profile::builder().plugin(first()).plugin(second()));
    assert_eq!(order_of(profile), ["y", "x2", "x1"]);
    let profile = build(Profile::builder().plugin(second()).plugin(first()));
    assert_eq!(order_of(profile), ["x2", "x1", "y"]);
}

#[test]
fn the_partition_tier_comes_before_the_order_keys() {
    let cluster = json!({
        "nodes": [{"name": "n1", "cpus": 1}],
        "partitions": [{"name": "low", "default": true}, {"name": "high", "priority_tier": 1}]});
    let profile = build(Profile::builder().plugin(keys("k", &[("low-job", 1_000_000)])));
    let mut s = with(cluster, profile);
    let mut high = JobSpec::new("high-job", 3_600_000, 1);
    high.partition = Some("high".into());
    tick(&mut s, 0, vec![cpus("blocker", 1)]);
    tick(&mut s, 1_000, vec![cpus("low-job", 1), submit(high)]);
    assert_eq!(order(&s), ["high-job", "low-job"]);
}

#[test]
fn equal_keys_go_to_submit_time_then_arrival() {
    let profile = build(Profile::builder().plugin(FnPlugin::new("same").order_key(|_, _| 7)));
    let mut s = with(one_node(1), profile);
    tick(&mut s, 0, vec![cpus("blocker", 1)]);
    let at = |id: &str, submit_ms| {
        let mut job = JobSpec::new(id, 3_600_000, 1);
        job.submit_ms = submit_ms;
        submit(job)
    };
    tick(
        &mut s,
        1_000,
        vec![
            at("x", Some(900)),
            at("y", Some(100)),
            at("z", None),
            at("w", None),
        ],
    );
    assert_eq!(order(&s), ["y", "x", "z", "w"]);
}

// ---------------------------------------------------------------------------------------------
// Node filters

fn nope() -> FnPlugin {
    FnPlugin::new("nope").filter_node(|_, _, _, _| Err("not today".into()))
}

#[test]
fn a_filter_rejecting_every_node_keeps_the_job_waiting_and_says_why() {
    let mut s = with(two_gpu_nodes(), build(Profile::builder().plugin(nope())));
    let out = tick(&mut s, 0, vec![gpus("j", 1)]);
    assert!(out.decisions.is_empty());
    let info = pending(&s, "j");
    assert_eq!(info.reason, PendingReason::Resources);
    assert_eq!(
        info.detail.as_deref(),
        Some("no node passed the filters for group 0: nope: not today (2 nodes)")
    );
}

#[test]
fn every_job_no_node_passes_for_is_told_why() {
    // Two jobs of one shape: the second must not lose its detail to the first's failure.
    let mut s = with(two_gpu_nodes(), build(Profile::builder().plugin(nope())));
    tick(&mut s, 0, vec![gpus("first", 1), gpus("second", 1)]);
    for job in ["first", "second"] {
        assert_eq!(
            pending(&s, job).detail.as_deref(),
            Some("no node passed the filters for group 0: nope: not today (2 nodes)"),
            "{job}"
        );
    }
}

#[test]
fn a_filter_rejecting_one_node_steers_placement() {
    let mut s = with(two_gpu_nodes(), Profile::default_for_config());
    assert_eq!(node_of(&tick(&mut s, 0, vec![gpus("j", 1)]), "j"), "n1");

    let not_n1 = FnPlugin::new("not_n1").filter_node(|_, _, node, _| match node.name() {
        "n1" => Err("reserved for maintenance".into()),
        _ => Ok(()),
    });
    let mut s = with(two_gpu_nodes(), build(Profile::builder().plugin(not_n1)));
    assert_eq!(node_of(&tick(&mut s, 0, vec![gpus("j", 1)]), "j"), "n2");
}

// ---------------------------------------------------------------------------------------------
// Node scores

/// Where a one-GPU job starts on [`two_gpu_nodes`] with this profile.
fn lands(profile: Profile) -> String {
    let mut s = with(two_gpu_nodes(), profile);
    node_of(&tick(&mut s, 0, vec![gpus("j", 1)]), "j").to_string()
}

#[test]
fn score_tiers_compare_lexicographically() {
    // Listed first but at tier 1: tier 0 decides, however large tier 1's difference.
    let profile = Profile::builder()
        .scorer(table("t1", &[("n1", 1e9)]), 1, 1.0)
        .scorer(table("t0", &[("n2", 1.0)]), 0, 1.0);
    assert_eq!(lands(build(profile)), "n2");
    // A tie at tier 0 goes to tier 1.
    let profile = Profile::builder()
        .scorer(table("t0", &[("n1", 5.0), ("n2", 5.0)]), 0, 1.0)
        .scorer(table("t1", &[("n2", 1.0)]), 1, 1.0);
    assert_eq!(lands(build(profile)), "n2");
    // Tiers need not be consecutive.
    let profile = Profile::builder()
        .scorer(table("t3", &[("n1", 1.0)]), 3, 1.0)
        .scorer(table("t2", &[("n2", 1.0)]), 2, 1.0);
    assert_eq!(lands(build(profile)), "n2");
}

#[test]
fn scores_within_a_tier_are_a_weighted_sum() {
    let a = || table("a", &[("n1", 1.0)]);
    let b = || table("b", &[("n2", 1.0)]);
    let weighted = |wa, wb| build(Profile::builder().scorer(a(), 0, wa).scorer(b(), 0, wb));
    assert_eq!(lands(weighted(2.0, 1.0)), "n1");
    assert_eq!(lands(weighted(1.0, 3.0)), "n2");
    // A negative weight turns a preference round.
    assert_eq!(lands(weighted(-1.0, 0.0)), "n2");
    // A zero weight silences a scorer: the tie keeps the visit order (best fit: n1).
    assert_eq!(lands(weighted(0.0, 0.0)), "n1");
}

#[test]
fn non_finite_scores_count_as_the_worst() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        // n1 is best fit and would win a tie; a bad score loses even to a very low one, and
        // no other scorer of its tier can redeem it.
        let profile = Profile::builder()
            .scorer(table("bad", &[("n1", bad), ("n2", -1e300)]), 0, 1.0)
            .scorer(table("good", &[("n1", 1e300)]), 0, 1.0);
        assert_eq!(lands(build(profile)), "n2", "{bad}");
        // A lower tier still decides first.
        let profile = Profile::builder()
            .scorer(table("first", &[("n1", 1.0)]), 0, 1.0)
            .scorer(table("bad", &[("n1", bad)]), 1, 1.0);
        assert_eq!(lands(build(profile)), "n1", "{bad}");
    }
}

#[test]
fn extreme_scores_never_break_anything() {
    // The largest finite score is the best.
    let max = table("max", &[("n2", f64::MAX)]);
    assert_eq!(lands(build(Profile::builder().scorer(max, 0, 1.0))), "n2");
    let min = table("min", &[("n1", f64::MIN), ("n2", -f64::MIN_POSITIVE)]);
    assert_eq!(lands(build(Profile::builder().scorer(min, 0, 1.0))), "n2");
    // A sum or a weighting that overflows is not finite: the worst.
    let profile = Profile::builder()
        .scorer(table("a", &[("n1", f64::MAX)]), 0, 1.0)
        .scorer(table("b", &[("n1", f64::MAX)]), 0, 1.0);
    assert_eq!(lands(build(profile)), "n2");
    let profile = Profile::builder().scorer(table("huge", &[("n1", 1e10)]), 0, 1e300);
    assert_eq!(lands(build(profile)), "n2");
    // Every node scored NaN: jobs still start, in the visit order, and a gang whole.
    let nan = FnPlugin::new("nan").score_node(|_, _, _, _| f64::NAN);
    let mut s = with(
        two_gpu_nodes(),
        build(Profile::builder().scorer(nan, 0, 1.0)),
    );
    let gang = JobSpec::new("gang", 3_600_000, 3)
        .with_gpus(Milli::from_units(1))
        .with_placement(gangway::PlacementMode::Spread);
    let out = tick(&mut s, 0, vec![gpus("j", 1), submit(gang)]);
    assert_eq!(node_of(&out, "j"), "n1");
    let tasks: u32 = placement(&out.decisions, "gang")
        .unwrap()
        .iter()
        .map(|e| e.tasks)
        .sum();
    assert_eq!(tasks, 3);
}

/// `n1` (2 GPUs), `n2` (4), `n3` (8), all in partitions `a` (the default) and `b`.
fn partitioned() -> Value {
    json!({"nodes": gpu_nodes(&[2, 4, 8]),
           "partitions": [{"name": "a", "default": true}, {"name": "b"}]})
}

#[test]
fn a_partitions_scorers_replace_the_global_ones() {
    // Globally n2 at tier 0; partition b has its own scorer, at tier 1, for n3. Were the
    // global one still applied in b, tier 0 would put b's job on n2; with none, best fit
    // would put it on n1.
    let profile = Profile::builder()
        .scorer(table("global", &[("n2", 1.0)]), 0, 1.0)
        .boxed(
            Box::new(table("own", &[("n3", 1.0)])),
            gangway::policy::Placement {
                partition: Some("b".into()),
                tier: 1,
                weight: 1.0,
            },
        );
    let mut s = with(partitioned(), build(profile));
    let out = tick(
        &mut s,
        0,
        vec![in_partition("in-a", "a", 1), in_partition("in-b", "b", 1)],
    );
    assert_eq!(node_of(&out, "in-a"), "n2");
    assert_eq!(node_of(&out, "in-b"), "n3");
}

#[test]
fn a_partitions_filters_add_to_the_global_ones() {
    let not = |name: &'static str, node: &'static str| {
        FnPlugin::new(name).filter_node(move |_, _, n, _| {
            if n.name() == node {
                Err(format!("not {node}"))
            } else {
                Ok(())
            }
        })
    };
    let profile = Profile::builder()
        .plugin(not("global", "n1"))
        .plugin_in("b", not("own", "n2"));
    let mut s = with(partitioned(), build(profile));
    let out = tick(
        &mut s,
        0,
        vec![in_partition("in-a", "a", 1), in_partition("in-b", "b", 1)],
    );
    assert_eq!(node_of(&out, "in-a"), "n2");
    assert_eq!(node_of(&out, "in-b"), "n3");
}

// ---------------------------------------------------------------------------------------------
// The built-in node choice (least_fragmenting) beside other scorers

/// `small` (16 cpus) and `wide1`, `wide2` (64 cpus), two T4s each, after four 8-cpu whole-GPU
/// jobs came and went: a 12-cpu half-GPU task on `small` would leave 4 cpus, stranding a GPU
/// for the 8-cpu shape, so the built-in node choice avoids it; `wide1` and `wide2` are alike
/// for it, and best fit visits `small`, `wide1`, `wide2` in that order.
fn strand_cluster(profile: Profile) -> Scheduler {
    let node = |name: &str, cpus: u32| {
        json!({"name": name, "cpus": cpus, "memory_mib": 64000,
               "gpus": {"model": "t4", "count": 2}})
    };
    let mut s = with(
        json!({"nodes": [node("small", 16), node("wide1", 64), node("wide2", 64)]}),
        profile,
    );
    let whole = |id: &str| {
        let mut job = JobSpec::new(id, 3_600_000, 1).with_gpus(Milli::from_units(1));
        job.groups[0].cpus = Milli::from_units(8);
        submit(job)
    };
    let ids = ["w1", "w2", "w3", "w4"];
    let out = tick(&mut s, 0, ids.iter().map(|id| whole(id)).collect());
    assert_eq!(common::decisions::starts(&out.decisions).len(), 4);
    tick(&mut s, 1, ids.iter().map(|id| finished(id)).collect());
    s
}

/// Where the 12-cpu half-GPU task of [`strand_cluster`] starts under `profile`.
fn heavy_lands(profile: Profile) -> String {
    let mut s = strand_cluster(profile);
    let mut job = JobSpec::new("heavy", 3_600_000, 1).with_gpus(Milli::from_milli(500));
    job.groups[0].cpus = Milli::from_units(12);
    node_of(&tick(&mut s, 2, vec![submit(job)]), "heavy").to_string()
}

/// A scorer answering 0 for every node.
fn zero() -> FnPlugin {
    FnPlugin::new("zero").score_node(|_, _, _, _| 0.0)
}

#[test]
fn the_built_in_node_choice_decides_and_a_lower_tier_scorer_breaks_its_ties() {
    // The default profile: the built-in avoids `small`; `wide1` and `wide2` tie, and the visit
    // order takes `wide1`.
    assert_eq!(heavy_lands(Profile::default_for_config()), "wide1");
    // A scorer at a lower tier (a higher tier number) keeps the built-in's choice where it
    // decides (not `small`, however high it scores there) and breaks its ties (`wide2`).
    let prefers = || table("prefers", &[("small", 100.0), ("wide2", 1.0)]);
    let beside = Profile::builder()
        .scorer(LeastFragmenting, 0, 1.0)
        .scorer(prefers(), 1, 1.0);
    assert_eq!(heavy_lands(build(beside)), "wide2");
    // The same at tiers 2 and 3: only the order of tiers counts.
    let beside = Profile::builder()
        .scorer(prefers(), 3, 1.0)
        .scorer(LeastFragmenting, 2, 1.0);
    assert_eq!(heavy_lands(build(beside)), "wide2");
    // A scorer at a higher tier decides first: the built-in only breaks its ties. Here `small`
    // and `wide1` tie at tier 0 and `wide2` is out; the built-in takes `wide1`, where best fit
    // alone would take `small`.
    let first = table("first", &[("small", 1.0), ("wide1", 1.0)]);
    let before = Profile::builder()
        .scorer(first, 0, 1.0)
        .scorer(LeastFragmenting, 1, 1.0);
    assert_eq!(heavy_lands(build(before)), "wide1");
    let first = table("first", &[("small", 1.0)]);
    let before = Profile::builder()
        .scorer(first, 0, 1.0)
        .scorer(LeastFragmenting, 1, 1.0);
    assert_eq!(heavy_lands(build(before)), "small");
    // A scorer answering 0 everywhere beside the built-in changes nothing.
    let beside = Profile::builder()
        .scorer(LeastFragmenting, 0, 1.0)
        .scorer(zero(), 1, 1.0);
    assert_eq!(heavy_lands(build(beside)), "wide1");
}

#[test]
fn a_scorer_added_to_the_default_profile_ranks_before_the_built_in() {
    // The default profile lists the built-in at the last tier, so a scorer added at the
    // default tier (0) decides first and the built-in breaks its ties.
    let added =
        |scorer: FnPlugin| build(Profile::default_for_config().into_builder().plugin(scorer));
    // `small` and `wide1` tie for the scorer; the built-in takes `wide1` (best fit: `small`).
    let tie = table("tie", &[("small", 1.0), ("wide1", 1.0)]);
    assert_eq!(heavy_lands(added(tie)), "wide1");
    // Where the scorer decides, its choice stands, even against the built-in's.
    assert_eq!(
        heavy_lands(added(table("first", &[("small", 1.0)]))),
        "small"
    );
    // A scorer answering 0 everywhere leaves every choice to the built-in.
    assert_eq!(heavy_lands(added(zero())), "wide1");
    // The built-in's tier itself stays its own.
    let err = Profile::default_for_config()
        .into_builder()
        .scorer(zero(), LeastFragmenting::DEFAULT_TIER, 1.0)
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        gangway::policy::ProfileError::NodeChoiceTierShared {
            plugin: "zero".into(),
            tier: LeastFragmenting::DEFAULT_TIER,
        }
    );
}

#[test]
fn without_the_built_in_the_scorers_order_alone_decides() {
    // A scorer without the built-in: the first node of its order that holds the task.
    let prefers = table("prefers", &[("small", 100.0), ("wide2", 1.0)]);
    assert_eq!(
        heavy_lands(build(Profile::builder().scorer(prefers, 0, 1.0))),
        "small"
    );
    // A scorer answering 0 everywhere replaces the built-in by best fit: `small`.
    assert_eq!(
        heavy_lands(build(Profile::builder().scorer(zero(), 0, 1.0))),
        "small"
    );
    // A profile with no node scorer at all keeps the engine's choice, as before the built-in
    // was a plug-in; and so does one listing only the built-in.
    assert_eq!(
        heavy_lands(build(Profile::builder().plugin(ShortestFirst))),
        "wide1"
    );
    assert_eq!(
        heavy_lands(build(Profile::builder().plugin(LeastFragmenting))),
        "wide1"
    );
    // A partition's own scorers replace the global ones, the built-in among them.
    let profile = Profile::builder().plugin(LeastFragmenting).boxed(
        Box::new(zero()),
        gangway::policy::Placement {
            partition: Some("b".into()),
            tier: 1,
            weight: 1.0,
        },
    );
    let node = |name: &str, cpus: u32| {
        json!({"name": name, "cpus": cpus, "memory_mib": 64000,
               "gpus": {"model": "t4", "count": 2}})
    };
    let mut s = with(
        json!({"nodes": [node("small", 16), node("wide1", 64)],
               "partitions": [{"name": "a", "default": true}, {"name": "b"}]}),
        build(profile),
    );
    let whole = |id: &str| {
        let mut job = JobSpec::new(id, 3_600_000, 1).with_gpus(Milli::from_units(1));
        job.groups[0].cpus = Milli::from_units(8);
        submit(job)
    };
    tick(&mut s, 0, vec![whole("w1"), whole("w2")]);
    tick(&mut s, 1, vec![finished("w1"), finished("w2")]);
    let heavy = |id: &str, partition: &str| {
        let mut job = JobSpec::new(id, 3_600_000, 1).with_gpus(Milli::from_milli(500));
        job.groups[0].cpus = Milli::from_units(12);
        job.partition = Some(partition.into());
        submit(job)
    };
    let out = tick(&mut s, 2, vec![heavy("in-b", "b")]);
    assert_eq!(node_of(&out, "in-b"), "small");
    let out = tick(&mut s, 3, vec![finished("in-b"), heavy("in-a", "a")]);
    assert_eq!(node_of(&out, "in-a"), "wide1");
}

#[test]
fn least_fragmenting_is_named_in_json_and_the_default_profile_lists_it() {
    assert!(Registry::builtin().contains("least_fragmenting"));
    let default = Profile::default_for_config();
    assert!(
        default
            .plugin::<LeastFragmenting>("least_fragmenting")
            .is_some()
    );
    let s = Scheduler::new(plugins_config(json!([
        {"name": "least_fragmenting", "tier": 1},
        {"name": "spread"}])))
    .unwrap();
    assert_eq!(
        s.profile().plugin_names().collect::<Vec<_>>(),
        ["least_fragmenting", "spread"]
    );
    // Named in JSON, it places as built in Rust.
    let specs: Vec<PluginSpec> = serde_json::from_value(json!([
        {"name": "binpack", "tier": 1},
        {"name": "least_fragmenting"}]))
    .unwrap();
    let from_json = Registry::builtin().profile_from_specs(&specs).unwrap();
    let from_rust = build(
        Profile::builder()
            .scorer(BinPack, 1, 1.0)
            .plugin(LeastFragmenting),
    );
    assert_eq!(heavy_lands(from_json), heavy_lands(from_rust));
}

#[test]
fn the_built_in_node_choice_holds_its_tier_alone_and_takes_no_weight() {
    use gangway::policy::ProfileError;
    let shared = |tier| ProfileError::NodeChoiceTierShared {
        plugin: "spread".into(),
        tier,
    };
    let err = Profile::builder()
        .scorer(LeastFragmenting, 0, 1.0)
        .scorer(Spread, 0, 1.0)
        .build()
        .unwrap_err();
    assert_eq!(err, shared(0));
    // Listed after it, or for one partition only: the same.
    let err = Profile::builder()
        .scorer(Spread, 2, 1.0)
        .boxed(
            Box::new(LeastFragmenting),
            gangway::policy::Placement {
                partition: Some("gpu".into()),
                tier: 2,
                weight: 1.0,
            },
        )
        .build()
        .unwrap_err();
    assert_eq!(err, shared(2));
    let err = Profile::builder()
        .scorer(LeastFragmenting, 0, 2.0)
        .build()
        .unwrap_err();
    assert_eq!(err, ProfileError::NodeChoiceWeight { weight: 2.0 });
    // From JSON: invalid_config naming the entry that broke the list, and nothing changes.
    let err = config_error(json!([{"name": "least_fragmenting"}, {"name": "spread"}]));
    assert_eq!(err.field, "policy.plugins[1]", "{err}");
    assert!(
        err.message.contains("least_fragmenting holds alone"),
        "{err}"
    );
    let err = config_error(json!([{"name": "least_fragmenting", "weight": 0.5}]));
    assert_eq!(err.field, "policy.plugins[0]", "{err}");
    assert!(err.message.contains("takes no weight"), "{err}");
    let err = config_error(json!([{"name": "least_fragmenting", "fill": true}]));
    assert_eq!(err.field, "policy.plugins[0]", "{err}");
    assert!(err.message.contains("fill"), "{err}");
    let mut s = Scheduler::new(plugins_config(json!([{"name": "least_fragmenting"}]))).unwrap();
    let err = s
        .reconfigure(plugins_config(json!([
            {"name": "spread", "tier": 3}, {"name": "least_fragmenting", "tier": 3}])))
        .unwrap_err();
    assert_eq!(err.field, "policy.plugins[1]", "{err}");
    assert_eq!(
        s.profile().plugin_names().collect::<Vec<_>>(),
        ["least_fragmenting"]
    );
}

// ---------------------------------------------------------------------------------------------
// Victims

/// The default profile's victim selection behind an order key by base priority, and `extra`.
fn victims_profile(extra: Vec<FnPlugin>) -> Profile {
    let mut builder = Profile::builder().plugin(by_priority());
    for plugin in extra {
        builder = builder.plugin(plugin);
    }
    for plugin in kueue_victims() {
        builder = builder.boxed(plugin, Default::default());
    }
    build(builder)
}

#[test]
fn a_min_run_time_veto_protects_a_job_and_no_other_plugin_silences_it() {
    let lenient = FnPlugin::new("lenient").veto_victim(|_, _, _| None::<Veto>);
    let profile = Profile::builder()
        .plugin(lenient)
        .plugin(by_priority())
        .plugin(MinRunTime::new(600_000));
    let mut s = with(order_based(one_node(1), true), build(profile));
    tick(&mut s, 0, vec![prio("low", 0)]);
    let out = tick(&mut s, 1_000, vec![prio("high", 10)]);
    assert!(preempts(&out).is_empty(), "{:?}", out.decisions);
    // The guard asks for a tick when it ends, and the preemptor gets its victim then.
    assert_eq!(out.next_wakeup_ms, Some(600_000));
    let out = tick(&mut s, 600_000, vec![]);
    assert_eq!(preempts(&out), [("low", "high")]);
}

#[test]
fn a_veto_of_the_victims_partition_protects_it_from_other_partitions() {
    let cluster = order_based(
        json!({"nodes": [{"name": "n1", "cpus": 1}],
               "partitions": [{"name": "a", "default": true}, {"name": "b"}]}),
        true,
    );
    let run = |guarded: bool| {
        let mut builder = Profile::builder().plugin(by_priority());
        if guarded {
            builder = builder.plugin_in("b", MinRunTime::new(600_000));
        }
        let mut s = with(cluster.clone(), build(builder));
        let mut low = JobSpec::new("low", 3_600_000, 1);
        low.partition = Some("b".into());
        tick(&mut s, 0, vec![submit(low)]);
        let out = tick(&mut s, 1_000, vec![prio("high", 10)]);
        preempts(&out).len()
    };
    assert_eq!(run(false), 1);
    assert_eq!(run(true), 0);
}

#[test]
fn a_victim_order_changes_which_job_is_preempted() {
    let run = |extra: Vec<FnPlugin>| {
        let mut s = with(order_based(one_node(2), true), victims_profile(extra));
        tick(&mut s, 0, vec![prio("older", 0)]);
        tick(&mut s, 1_000, vec![prio("newer", 0)]);
        let out = tick(&mut s, 2_000, vec![prio("high", 10)]);
        preempts(&out)
            .into_iter()
            .map(|(v, _)| v.to_string())
            .collect::<Vec<_>>()
    };
    // Kueue's order: the most recently started first.
    assert_eq!(run(vec![]), ["newer"]);
    let oldest_first = FnPlugin::new("oldest_first").victim_key(|_, victim, _| {
        victim
            .current_run()
            .map_or(0, |(start, _)| i64::try_from(start).unwrap())
    });
    assert_eq!(run(vec![oldest_first]), ["older"]);
}

#[test]
fn a_veto_returning_junk_is_harmless() {
    // The hook is asked only about candidates, so it cannot name another job; what it can do
    // is return any text, even empty: every `Some` protects its victim and nothing else.
    let junk = "\0\u{202e}".to_string() + &"x".repeat(100_000);
    let junky = FnPlugin::new("junky").veto_victim(move |_, victim, _| match victim.name() {
        "newer" => Some(junk.clone()),
        _ => None,
    });
    let mut s = with(order_based(one_node(2), true), victims_profile(vec![junky]));
    tick(&mut s, 0, vec![prio("older", 0)]);
    tick(&mut s, 1_000, vec![prio("newer", 0)]);
    let out = tick(&mut s, 2_000, vec![prio("high", 10)]);
    assert_eq!(preempts(&out), [("older", "high")]);
    assert!(out.plugin_faults.is_empty());

    let empty = FnPlugin::new("empty").veto_victim(|_, _, _| Some(String::new()));
    let mut s = with(order_based(one_node(1), true), victims_profile(vec![empty]));
    tick(&mut s, 0, vec![prio("low", 0)]);
    let out = tick(&mut s, 1_000, vec![prio("high", 10)]);
    assert!(out.decisions.is_empty(), "{:?}", out.decisions);
    assert!(s.state().job_by_name("low").unwrap().is_running());
}

// ---------------------------------------------------------------------------------------------
// Order-based preemption

#[test]
fn a_higher_key_preempts_a_lower_key_and_an_equal_key_does_not() {
    let profile = || build(Profile::builder().plugin(by_priority()));
    let mut s = with(order_based(one_node(1), true), profile());
    tick(&mut s, 0, vec![prio("low", 0)]);
    let out = tick(&mut s, 1_000, vec![prio("high", 1)]);
    assert_eq!(preempts(&out), [("low", "high")]);

    let mut s = with(order_based(one_node(1), true), profile());
    tick(&mut s, 0, vec![prio("first", 3)]);
    let out = tick(&mut s, 1_000, vec![prio("second", 3)]);
    assert!(out.decisions.is_empty(), "{:?}", out.decisions);
    let info = pending(&s, "second");
    assert_eq!(
        (info.reason, info.estimated_start_ms),
        (PendingReason::Reserved, Some(3_600_000))
    );

    // Without `order_based` a higher key preempts nobody.
    let cluster = json!({"nodes": [{"name": "n1", "cpus": 1}],
                         "policy": {"preemption": {"enabled": true}}});
    let mut s = with(cluster, profile());
    tick(&mut s, 0, vec![prio("low", 0)]);
    assert!(
        tick(&mut s, 1_000, vec![prio("high", 1)])
            .decisions
            .is_empty()
    );
}

/// `low` runs, `high` preempts it and starts, then `low` is raised above `high`: the
/// preemptions of the last tick.
fn raised_victim(anti_thrash: bool) -> Vec<(String, String)> {
    let profile = build(Profile::builder().plugin(by_priority()));
    let mut s = with(order_based(one_node(1), anti_thrash), profile);
    tick(&mut s, 0, vec![prio("low", 0)]);
    let out = tick(&mut s, 1_000, vec![prio("high", 5)]);
    assert_eq!(preempts(&out), [("low", "high")]);
    let out = tick(
        &mut s,
        2_000,
        vec![event(json!({"type": "stopped", "job": "low"}))],
    );
    assert_eq!(started(&out.decisions), ["high"]);
    let raise = event(json!({"type": "set_priority", "job": "low", "priority": 9}));
    let out = tick(&mut s, 3_000, vec![raise]);
    preempts(&out)
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn anti_thrash_keeps_a_job_from_preempting_the_one_that_preempted_it() {
    assert_eq!(raised_victim(true), []);
}

#[test]
fn without_anti_thrash_a_job_may_preempt_the_one_that_preempted_it() {
    assert_eq!(
        raised_victim(false),
        [("high".to_string(), "low".to_string())]
    );
}

// ---------------------------------------------------------------------------------------------
// Wake-ups, observation, state

#[test]
fn wake_up_requests_merge_into_next_wakeup_earliest_first() {
    let profile = || {
        build(
            Profile::builder()
                .plugin(FnPlugin::new("later").wake_up(|c| Some(c.now_ms() + 5_000)))
                .plugin(FnPlugin::new("sooner").wake_up(|c| Some(c.now_ms() + 2_000)))
                .plugin(FnPlugin::new("now").wake_up(|c| Some(c.now_ms())))
                .plugin(FnPlugin::new("past").wake_up(|c| c.now_ms().checked_sub(1)))
                .plugin(FnPlugin::new("none").wake_up(|_| None)),
        )
    };
    // The engine's own wake-up (the job's time limit, at 3,610,000) is later.
    let mut s = with(one_node(1), profile());
    let out = tick(&mut s, 10_000, vec![cpus("j", 1)]);
    assert_eq!(out.next_wakeup_ms, Some(12_000));
    assert_eq!(s.next_wakeup(), Some(12_000));

    // Only past times and now: the engine's stands; none at all: none.
    let profile = || {
        build(
            Profile::builder()
                .plugin(FnPlugin::new("now").wake_up(|c| Some(c.now_ms())))
                .plugin(FnPlugin::new("past").wake_up(|_| Some(0))),
        )
    };
    let mut s = with(one_node(1), profile());
    assert_eq!(
        tick(&mut s, 10_000, vec![cpus("j", 1)]).next_wakeup_ms,
        Some(3_610_000)
    );
    let mut s = with(one_node(1), profile());
    assert_eq!(tick(&mut s, 10_000, vec![]).next_wakeup_ms, None);
    // An earlier engine wake-up wins over a plug-in's.
    let far = build(Profile::builder().plugin(FnPlugin::new("far").wake_up(|_| Some(u64::MAX))));
    let mut s = with(one_node(1), far);
    assert_eq!(
        tick(&mut s, 0, vec![cpus("j", 1)]).next_wakeup_ms,
        Some(3_600_000)
    );
}

type Seen = Arc<Mutex<Vec<(u64, Vec<Event>, Vec<Decision>, Vec<usize>)>>>;

/// The positions of the events a tick rejected.
fn rejected(outcome: &TickOutcome) -> Vec<usize> {
    outcome.rejected.iter().map(|r| r.index).collect()
}

/// Records every tick it observes.
#[derive(Clone)]
struct Recorder(Seen);

#[gangway::policy::plugin]
impl Plugin for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }
    fn observe(&mut self, now_ms: u64, events: &[Event], outcome: &TickOutcome) {
        self.0.lock().unwrap().push((
            now_ms,
            events.to_vec(),
            outcome.decisions.clone(),
            rejected(outcome),
        ));
    }
}

#[test]
fn observe_sees_each_ticks_events_and_decisions() {
    let seen: Seen = Arc::default();
    let profile = build(Profile::builder().plugin(Recorder(Arc::clone(&seen))));
    let mut s = with(one_node(1), profile);
    let first = vec![cpus("a", 1), cpus("b", 1)];
    let out0 = tick(&mut s, 0, first.clone());
    // Rejected events are shown as sent, like the rest, and the outcome says which they are.
    let second = vec![finished("a"), finished("ghost")];
    let out1 = checked_tick(&mut s, 500, second.clone()).unwrap();
    assert_eq!(rejected(&out1), [1]);
    let out2 = tick(&mut s, 900, vec![]);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (0, first, out0.decisions, vec![]),
            (500, second, out1.decisions, vec![1]),
            (900, vec![], out2.decisions, vec![])
        ]
    );
}

/// Counts the ticks it observed, and orders jobs by arrival, ascending or descending as the
/// count is odd or even (so its state shows in decisions); panics in its order hook once the
/// count reaches `panic_from`.
#[derive(Clone)]
struct Counter {
    ticks: u64,
    panic_from: u64,
}

#[gangway::policy::plugin]
impl Plugin for Counter {
    fn name(&self) -> &str {
        "counter"
    }
    fn order_key(&self, job: JobView<'_>, _: &PassContext<'_>) -> i64 {
        assert!(self.ticks < self.panic_from, "counter gave up");
        // Alternately the first and the last submitted first.
        let arrival = job.arrival() as i64;
        if self.ticks.is_multiple_of(2) {
            arrival
        } else {
            -arrival
        }
    }
    fn observe(&mut self, _: u64, _: &[Event], _: &TickOutcome) {
        self.ticks += 1;
    }
    fn save_state(&self) -> Option<Value> {
        Some(json!(self.ticks))
    }
    fn load_state(&mut self, state: Value) -> Result<(), String> {
        if state == "panic" {
            panic!("cannot load");
        }
        if let Some(negative) = state.as_i64().filter(|n| *n < 0) {
            // A failure reported as a value: its answer (`Ok`) is dropped.
            report_fault(format!("a negative count: {negative}"));
            return Ok(());
        }
        self.ticks = state.as_u64().ok_or(format!("not a count: {state}"))?;
        Ok(())
    }
}

fn counter(panic_from: u64) -> Profile {
    build(Profile::builder().plugin(Counter {
        ticks: 0,
        panic_from,
    }))
}

/// The plug-in states a snapshot of `s` carries, as JSON.
fn saved_states(s: &Scheduler) -> Value {
    serde_json::to_value(s.snapshot()).unwrap()["plugins"].clone()
}

#[test]
fn a_plugins_state_survives_snapshot_and_restore() {
    let mut s = with(one_node(1), counter(u64::MAX));
    tick(&mut s, 0, vec![cpus("run", 1)]);
    tick(&mut s, 1, vec![cpus("a", 1), cpus("b", 1), cpus("c", 1)]);
    tick(&mut s, 2, vec![]);
    assert_eq!(saved_states(&s), json!([["counter", 3]]));
    // Through JSON, as a host stores it.
    let text = serde_json::to_string(&s.snapshot()).unwrap();
    let mut restored =
        Scheduler::restore_with_profile(serde_json::from_str(&text).unwrap(), counter(u64::MAX))
            .unwrap();
    assert_eq!(restored.profile().save_states(), s.profile().save_states());
    for (at, events) in [(3, vec![finished("run")]), (4, vec![]), (5, vec![])] {
        let want = tick(&mut s, at, events.clone());
        assert_eq!(tick(&mut restored, at, events), want);
        assert_eq!(restored.explain(), s.explain());
    }
    // The state decides: restored with the count reset, the order differs.
    let restore = |ticks: u64| {
        let mut snapshot: Value = serde_json::from_str(&text).unwrap();
        snapshot["plugins"] = json!([["counter", ticks]]);
        Scheduler::restore_with_profile(
            serde_json::from_value(snapshot).unwrap(),
            counter(u64::MAX),
        )
        .unwrap()
    };
    let (mut kept, mut reset) = (restore(3), restore(0));
    tick(&mut kept, 3, vec![]);
    tick(&mut reset, 3, vec![]);
    assert_eq!(order(&kept), ["a", "b", "c"]);
    assert_eq!(order(&reset), ["c", "b", "a"]);
}

#[test]
fn a_restore_whose_state_names_no_plugin_is_refused() {
    let mut s = with(one_node(1), counter(u64::MAX));
    tick(&mut s, 0, vec![cpus("a", 1)]);
    let err =
        Scheduler::restore_with_profile(s.snapshot(), Profile::default_for_config()).unwrap_err();
    assert!(
        matches!(&err, RestoreError::PluginState { plugin, .. } if plugin == "counter"),
        "{err}"
    );
    // A state its plug-in refuses is refused too, with the plug-in's message.
    let mut snapshot = serde_json::to_value(s.snapshot()).unwrap();
    snapshot["plugins"] = json!([["counter", "junk"]]);
    let err = Scheduler::restore_with_profile(
        serde_json::from_value(snapshot).unwrap(),
        counter(u64::MAX),
    )
    .unwrap_err();
    assert_eq!(
        err,
        RestoreError::PluginState {
            plugin: "counter".into(),
            message: "not a count: \"junk\"".into()
        }
    );
    // A plug-in that panics, or reports a failure, while loading: refused with its message.
    for (state, message) in [
        (
            json!("panic"),
            "failed while loading its state: cannot load",
        ),
        (
            json!(-2),
            "failed while loading its state: a negative count: -2",
        ),
    ] {
        let mut snapshot = serde_json::to_value(s.snapshot()).unwrap();
        snapshot["plugins"] = json!([["counter", state]]);
        let snapshot = serde_json::from_value(snapshot).unwrap();
        let err = Scheduler::restore_with_profile(snapshot, counter(u64::MAX)).unwrap_err();
        let want = RestoreError::PluginState {
            plugin: "counter".into(),
            message: message.into(),
        };
        assert_eq!(err, want);
    }
}

#[test]
fn a_snapshot_keeps_the_state_of_a_plugin_that_panicked_in_the_last_tick() {
    // The counter panics in its order hook at its third tick; it still observes that tick (an
    // observer never misses one), and its count (3) must still be saved, or a restored
    // scheduler would not continue as the original.
    let mut s = with(one_node(1), counter(2));
    tick(&mut s, 0, vec![cpus("run", 1)]);
    tick(&mut s, 1, vec![cpus("wait", 1)]);
    let out = tick(&mut s, 2, vec![]);
    assert_eq!(out.plugin_faults.len(), 1);
    assert_eq!(saved_states(&s), json!([["counter", 3]]));
}

// ---------------------------------------------------------------------------------------------
// Panicking plug-ins

/// Answers like an absent plug-in at every hook, but panics at `hook`.
#[derive(Clone)]
struct Panicky {
    hook: Hook,
    /// Reports the fault ([`report_fault`]) and answers, instead of panicking.
    reports: bool,
}

const EVERY_HOOK: [Hook; 9] = [
    Hook::Prepare,
    Hook::Admission,
    Hook::Order,
    Hook::NodeFilter,
    Hook::NodeScore,
    Hook::VictimVeto,
    Hook::VictimOrder,
    Hook::WakeUp,
    Hook::Observe,
];

impl Panicky {
    fn at(&self, hook: Hook) {
        if self.hook == hook {
            match self.reports {
                true => assert!(report_fault(format!("boom in {}", hook.name()))),
                false => panic!("boom in {}", hook.name()),
            }
        }
    }
}

#[gangway::policy::plugin]
impl Plugin for Panicky {
    fn name(&self) -> &str {
        "panicky"
    }
    fn prepare(&mut self, _: &PassContext<'_>, _: &[Event]) {
        self.at(Hook::Prepare);
    }
    fn admit(&self, _: JobView<'_>, _: &PassContext<'_>) -> Vote {
        self.at(Hook::Admission);
        Vote::Abstain
    }
    fn order_key(&self, _: JobView<'_>, _: &PassContext<'_>) -> i64 {
        self.at(Hook::Order);
        0
    }
    fn filter_node(
        &self,
        _: JobView<'_>,
        _: usize,
        _: NodeView<'_>,
        _: &PassContext<'_>,
    ) -> Result<(), String> {
        self.at(Hook::NodeFilter);
        Ok(())
    }
    fn score_node(&self, _: JobView<'_>, _: usize, _: NodeView<'_>, _: &PassContext<'_>) -> f64 {
        self.at(Hook::NodeScore);
        0.0
    }
    fn veto_victim(&self, _: JobView<'_>, _: JobView<'_>, _: &PassContext<'_>) -> Option<Veto> {
        self.at(Hook::VictimVeto);
        None
    }
    fn victim_key(&self, _: JobView<'_>, _: JobView<'_>, _: &PassContext<'_>) -> i64 {
        self.at(Hook::VictimOrder);
        0
    }
    fn wake_up(&self, _: &PassContext<'_>) -> Option<u64> {
        self.at(Hook::WakeUp);
        None
    }
    fn observe(&mut self, _: u64, _: &[Event], _: &TickOutcome) {
        self.at(Hook::Observe);
    }
}

/// Panics in its device choice or its domain score, as `hook` says.
fn panicky_placer(hook: Hook) -> FnPlugin {
    let plugin = FnPlugin::new("panicky_placer");
    match hook {
        Hook::DeviceChoice => plugin.choose_devices(|_, _| panic!("boom in device_choice")),
        _ => plugin.score_domain(|_, _, _| panic!("boom in domain_score")),
    }
}

#[test]
fn a_plugin_panicking_in_device_choice_or_domain_score_abstains() {
    let node = |name: &str, rack: &str| {
        json!({"name": name, "cpus": 8,
        "gpus": {"model": "h100", "count": 4}, "labels": {"rack": rack}})
    };
    let cluster = json!({"topology": ["rack"],
        "nodes": [node("n1", "r1"), node("n2", "r2"), node("n3", "r1")]});
    let gang = || submit(JobSpec::new("gang", 3_600_000, 2).with_gpus(Milli::from_units(2)));
    for hook in [Hook::DeviceChoice, Hook::DomainScore] {
        let mut calm = with(cluster.clone(), Profile::default_for_config());
        let mut builder = Profile::builder().plugin(panicky_placer(hook));
        for plugin in Profile::default_for_config().into_plugins() {
            builder = builder.boxed(plugin, Default::default());
        }
        let mut s = with(cluster.clone(), build(builder));
        let want = tick(&mut calm, 0, vec![gpus("a", 1), gang()]);
        let out = tick(&mut s, 0, vec![gpus("a", 1), gang()]);
        assert_eq!(out.decisions, want.decisions, "{hook:?}");
        let fault = (
            "panicky_placer".into(),
            hook,
            FaultKind::Panic,
            format!("boom in {}", hook.name()),
        );
        assert_eq!(said(&out.plugin_faults), [fault], "{hook:?}");
    }
}

/// What each fault says: its plug-in, hook, kind and message.
fn said(faults: &[PluginFault]) -> Vec<(String, Hook, FaultKind, String)> {
    faults
        .iter()
        .map(|f| (f.plugin.clone(), f.hook, f.kind, f.message.clone()))
        .collect()
}

/// Two one-cpu nodes with order-based preemption: `a` and `b` start, then `h1` and `h2`
/// preempt one each, then both stop. Every hook is called at 1,000 and at 2,000.
fn panic_scenario() -> Vec<(u64, Vec<Event>)> {
    let stopped = |job: &str| event(json!({"type": "stopped", "job": job}));
    vec![
        (0, vec![prio("a", 0), prio("b", 0)]),
        (1_000, vec![prio("h1", 10)]),
        (2_000, vec![prio("h2", 10)]),
        (3_000, vec![stopped("a"), stopped("b")]),
        (4_000, vec![finished("h1")]),
    ]
}

#[test]
fn a_panicking_plugin_never_panics_out_of_tick_and_abstains_for_its_pass() {
    let cluster = order_based(
        json!({"nodes": [{"name": "n1", "cpus": 1}, {"name": "n2", "cpus": 1}]}),
        true,
    );
    let profile = |panicky: Option<Panicky>| {
        let mut builder = Profile::builder().plugin(by_priority());
        if let Some(panicky) = panicky {
            builder = builder.scorer(panicky, 0, 1.0);
        }
        build(builder)
    };
    // A plug-in that reports its fault as a value is taken exactly as one that panics.
    for (hook, reports) in EVERY_HOOK.into_iter().flat_map(|h| [(h, false), (h, true)]) {
        let mut calm = with(cluster.clone(), profile(None));
        let mut s = with(cluster.clone(), profile(Some(Panicky { hook, reports })));
        for (at, events) in panic_scenario() {
            let want = tick(&mut calm, at, events.clone());
            let out = tick(&mut s, at, events);
            // It abstained: the decisions are those of the profile without it.
            assert_eq!(
                out.decisions, want.decisions,
                "{hook:?} ({reports}) at {at}"
            );
            assert_eq!(out.next_wakeup_ms, want.next_wakeup_ms, "{hook:?} at {at}");
            assert_eq!(s.explain(), calm.explain(), "{hook:?} at {at}");
            let fault = (
                "panicky".into(),
                hook,
                FaultKind::Panic,
                format!("boom in {}", hook.name()),
            );
            // Reported once per tick, and called again (so reported again) at the next.
            match at {
                1_000 | 2_000 => assert_eq!(said(&out.plugin_faults), [fault], "{hook:?} at {at}"),
                _ => assert!(
                    said(&out.plugin_faults).iter().all(|f| *f == fault)
                        && out.plugin_faults.len() <= 1,
                    "{hook:?} at {at}: {:?}",
                    out.plugin_faults
                ),
            }
        }
        let snapshot = |s: &Scheduler| serde_json::to_value(s.snapshot()).unwrap();
        assert_eq!(snapshot(&s), snapshot(&calm), "{hook:?}");
    }
}

/// Orders by base priority, but cannot explain its key.
#[derive(Clone)]
struct BadExplainer;

#[gangway::policy::plugin]
impl Plugin for BadExplainer {
    fn name(&self) -> &str {
        "bad_explainer"
    }
    fn order_key(&self, job: JobView<'_>, _: &PassContext<'_>) -> i64 {
        i64::from(job.spec().priority)
    }
    fn explain_key(&self, _: JobView<'_>, _: &PassContext<'_>) -> Vec<(String, f64)> {
        panic!("cannot explain")
    }
}

#[test]
fn reading_a_scheduler_changes_no_tick() {
    // `priorities` asks the order plug-ins to explain their keys between ticks; a plug-in
    // that panics there must not turn up in the next tick's outcome.
    let profile = || build(Profile::builder().plugin(BadExplainer));
    let mut read = with(one_node(1), profile());
    let mut unread = with(one_node(1), profile());
    for s in [&mut read, &mut unread] {
        tick(s, 0, vec![cpus("run", 1)]);
        tick(s, 1, vec![prio("a", 1), cpus("b", 1)]);
    }
    let jobs: Vec<String> = read.priorities().into_iter().map(|p| p.job).collect();
    assert_eq!(jobs, ["a", "b"]);
    let _ = (read.explain(), read.snapshot(), read.pending_info());
    for at in [1_000, 2_000] {
        let out = tick(&mut read, at, vec![]);
        assert_eq!(out, tick(&mut unread, at, vec![]));
        assert!(out.plugin_faults.is_empty(), "{:?}", out.plugin_faults);
    }
}

// ---------------------------------------------------------------------------------------------
// CLUSTER's policy.plugins

fn plugins_config(plugins: Value) -> ClusterConfig {
    config(json!({
        "nodes": [{"name": "n1", "cpus": 4}],
        "partitions": [{"name": "main", "default": true}, {"name": "gpu"}],
        "policy": {"plugins": plugins}}))
}

fn config_error(plugins: Value) -> gangway::ConfigError {
    Scheduler::new(plugins_config(plugins)).unwrap_err()
}

#[test]
fn policy_plugins_errors_name_the_entry() {
    let err = config_error(json!([{"name": "las"}, {"name": "no_such"}]));
    assert_eq!(err.field, "policy.plugins[1]");
    assert!(
        err.message.starts_with("unknown plug-in \"no_such\""),
        "{err}"
    );

    let err = config_error(json!([{"name": "spread", "mood": "happy"}]));
    assert_eq!(err.field, "policy.plugins[0]");
    assert!(err.message.contains("mood"), "{err}");

    let err = config_error(json!([{"name": "min_run_time"}]));
    assert_eq!(err.field, "policy.plugins[0]");
    assert!(err.message.contains("min_ms"), "{err}");

    // A bad tier names its own entry, not the last one.
    let err = config_error(json!([{"name": "spread", "tier": 4}, {"name": "las"}]));
    assert_eq!(err.field, "policy.plugins[0]", "{err}");
    assert!(err.message.contains("tier 4"), "{err}");

    let err = config_error(json!([{"name": "las", "partition": "gpu"}, {"name": "spread"}]));
    assert_eq!(err.field, "policy.plugins[0]", "{err}");
    assert!(err.message.contains("global hook order"), "{err}");

    // A second entry of the same plug-in is the one in error.
    let err = config_error(json!([{"name": "spread"}, {"name": "binpack"}, {"name": "spread"}]));
    assert_eq!(err.field, "policy.plugins[2]", "{err}");

    // JSON has no infinite numbers; a weight given in Rust can be one.
    let mut cluster = plugins_config(json!([]));
    let spec = |name: &str, weight| PluginSpec {
        name: name.into(),
        partition: None,
        tier: 0,
        weight,
        params: Default::default(),
    };
    cluster.policy.plugins = Some(vec![
        spec("binpack", f64::INFINITY),
        spec("spread", f64::NAN),
    ]);
    let err = Scheduler::new(cluster).unwrap_err();
    assert_eq!(err.field, "policy.plugins[0]", "{err}");
    assert!(err.message.contains("not a finite number"), "{err}");
}

#[test]
fn a_plugin_listed_for_a_partition_that_is_not_configured_is_refused() {
    let err = config_error(json!([{"name": "spread"}, {"name": "binpack", "partition": "tpu"}]));
    assert_eq!(err.field, "policy.plugins[1].partition", "{err}");
    assert!(err.message.contains("\"tpu\""), "{err}");
    // The same from Rust, at the scheduler's construction.
    let profile = build(Profile::builder().plugin_in("tpu", BinPack));
    let err = Scheduler::with_profile(plugins_config(json!([])), profile).unwrap_err();
    assert_eq!(err.field, "profile");
    assert!(
        err.message.contains("binpack") && err.message.contains("tpu"),
        "{err}"
    );
}

#[test]
fn a_tier_or_weight_on_a_plugin_that_scores_nothing_is_refused() {
    let err = config_error(json!([{"name": "shortest_first", "weight": 2.0}]));
    assert_eq!(err.field, "policy.plugins[0]", "{err}");
    assert!(err.message.contains("no tier or weight"), "{err}");
    let err =
        config_error(json!([{"name": "spread"}, {"name": "min_run_time", "min_ms": 1, "tier": 1}]));
    assert_eq!(err.field, "policy.plugins[1]", "{err}");
}

#[test]
fn a_guard_may_serve_one_partition() {
    // min_run_time's veto protects only the partition it is listed for (the wake-up at its
    // end comes with the veto).
    let s = Scheduler::new(plugins_config(json!([
        {"name": "multifactor"},
        {"name": "min_run_time", "min_ms": 600000, "partition": "gpu"}])));
    assert!(s.is_ok(), "{:?}", s.err());
}

#[test]
fn a_valid_policy_plugins_list_builds_those_plugins_in_order() {
    let s = Scheduler::new(plugins_config(json!([
        {"name": "las", "min_quantum_ms": 600000},
        {"name": "min_run_time", "min_ms": 60000},
        {"name": "avoid_gpu_faults", "hours": 24},
        {"name": "spread", "tier": 0, "weight": 2.0},
        {"name": "binpack", "partition": "gpu", "tier": 1},
        {"name": "kueue_victims"}])))
    .unwrap();
    assert_eq!(
        s.profile().plugin_names().collect::<Vec<_>>(),
        [
            "las",
            "min_run_time",
            "avoid_gpu_faults",
            "spread",
            "binpack",
            "tier_guard",
            "lower_tier_first",
            "borrowing_first",
            "lower_priority_first",
            "newest_first"
        ]
    );
    // Without the list: the default profile.
    let mut cluster = plugins_config(json!([]));
    cluster.policy.plugins = None;
    let names: Vec<String> = Scheduler::new(cluster)
        .unwrap()
        .profile()
        .plugin_names()
        .map(String::from)
        .collect();
    let default = Profile::default_for_config();
    assert_eq!(names, default.plugin_names().collect::<Vec<_>>());
    // Spread from JSON places as spread from Rust.
    let mut s = Scheduler::new(config(json!({"nodes": gpu_nodes(&[4, 4]),
        "policy": {"plugins": [{"name": "spread"}]}})))
    .unwrap();
    let out = tick(&mut s, 0, vec![gpus("a", 1), gpus("b", 1)]);
    assert_eq!((node_of(&out, "a"), node_of(&out, "b")), ("n1", "n2"));
}

#[test]
fn a_shim_tick_reports_the_faults_of_panicking_plugins() {
    let profile = Profile::builder()
        .plugin(FnPlugin::new("grumpy").order_key(|_, _| panic!("no order today")));
    let mut shim = Shim::with_scheduler(with(one_node(2), build(profile)));
    let job = json!({"type": "submit", "job": {"id": "a", "time_limit_ms": 1000, "groups": [{"count": 1}]}});
    let reply = send(
        &mut shim,
        json!({"op": "tick", "at_ms": 0, "events": [job]}),
    );
    assert_eq!(reply["ok"], true, "{reply}");
    assert_eq!(
        reply["plugin_faults"],
        json!([{"plugin": "grumpy", "hook": "order", "kind": "panic", "message": "no order today"}])
    );
    // A tick without faults carries no such field.
    let reply = send(&mut shim, json!({"op": "tick", "at_ms": 1, "events": []}));
    assert!(reply.get("plugin_faults").is_none(), "{reply}");
}

/// The built-ins and `veto_all`: a host's plug-in that vetoes every preemption, and `avoid`,
/// which keeps jobs off the node its parameter names.
fn host_registry() -> Registry {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Avoid {
        node: String,
    }
    let mut registry = Registry::builtin();
    registry
        .register("avoid", |p: Avoid| {
            Ok(FnPlugin::new("avoid").filter_node(move |_, _, node, _| {
                match node.name() == p.node {
                    true => Err(format!("avoids {}", p.node)),
                    false => Ok(()),
                }
            }))
        })
        .unwrap();
    registry
}

#[test]
fn a_shim_with_a_registry_lets_its_clients_name_the_hosts_plugins() {
    let cluster = |plugins: Value| {
        json!({"nodes": [{"name": "n1", "cpus": 1}, {"name": "n2", "cpus": 1}],
               "policy": {"plugins": plugins}})
    };
    let job = |id: &str| json!({"type": "submit", "job": {"id": id, "time_limit_ms": 1000, "groups": [{"count": 1}]}});
    let mut shim = Shim::with_registry(host_registry());
    // A host's name with a bad parameter, and an unknown name: refused as in any shim, naming
    // the entry, and nothing is configured.
    for (plugins, message) in [
        (
            json!([{"name": "avoid", "nod": "n1"}]),
            "cluster.policy.plugins[0]: avoid: nod: unknown field `nod`, expected `node`",
        ),
        (
            json!([{"name": "las"}, {"name": "nope"}]),
            "cluster.policy.plugins[1]: unknown plug-in \"nope\"; the built-ins are multifactor,",
        ),
    ] {
        let reply = send(
            &mut shim,
            json!({"op": "configure", "cluster": cluster(plugins)}),
        );
        assert_eq!(reply["error"]["kind"], "invalid_config", "{reply}");
        let text = reply["error"]["message"].as_str().unwrap();
        assert!(text.starts_with(message), "{text}");
        assert!(shim.scheduler().is_none());
    }
    let unknown = send(
        &mut shim,
        json!({"op": "configure", "cluster": cluster(json!([{"name": "nope"}]))}),
    );
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .ends_with("; the host's are avoid"),
        "{unknown}"
    );
    // Named with a built-in, the host's plug-in decides.
    let plugins = json!([{"name": "shortest_first"}, {"name": "avoid", "node": "n1"}]);
    let reply = send(
        &mut shim,
        json!({"op": "configure", "cluster": cluster(plugins)}),
    );
    assert_eq!(reply["ok"], true, "{reply}");
    let names: Vec<&str> = shim.scheduler().unwrap().profile().plugin_names().collect();
    assert_eq!(names, ["shortest_first", "avoid"]);
    let out = send(
        &mut shim,
        json!({"op": "tick", "at_ms": 0, "events": [job("a"), job("b")]}),
    );
    let placed: Vec<&str> = out["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["placement"][0]["node"].as_str().unwrap())
        .collect();
    assert_eq!(placed, ["n2"], "{out}");
    // A snapshot restores with the host's plug-in again.
    let state = send(&mut shim, json!({"op": "snapshot"}))["state"].clone();
    let mut fresh = Shim::with_registry(host_registry());
    assert_eq!(
        send(&mut fresh, json!({"op": "restore", "state": state}))["ok"],
        true
    );
    let again = send(&mut fresh, json!({"op": "explain"}));
    assert_eq!(again, send(&mut shim, json!({"op": "explain"})));
    // The plain shim knows only the built-ins.
    let reply = send(
        &mut Shim::default(),
        json!({"op": "restore", "state": state}),
    );
    assert_eq!(reply["error"]["kind"], "invalid_state", "{reply}");
}

#[test]
fn a_shim_configure_with_a_bad_list_is_refused_and_changes_nothing() {
    let mut shim = Shim::default();
    let good = json!({"nodes": [{"name": "n1", "cpus": 2}],
                      "policy": {"plugins": [{"name": "shortest_first"}]}});
    assert_eq!(
        send(&mut shim, json!({"op": "configure", "cluster": good}))["ok"],
        true
    );
    let job = |id: &str, limit: u64| {
        json!({"type": "submit", "job": {"id": id,
        "time_limit_ms": limit, "groups": [{"count": 2}]}})
    };
    send(
        &mut shim,
        json!({"op": "tick", "at_ms": 0, "events": [job("run", 1000), job("long", 9000), job("short", 5000)]}),
    );
    let before = send(&mut shim, json!({"op": "snapshot"}));
    for (plugins, field) in [
        (
            json!([{"name": "shortest_first"}, {"name": "nope"}]),
            "policy.plugins[1]",
        ),
        (
            json!([{"name": "spread", "weight": "heavy"}]),
            "policy.plugins[0]",
        ),
        (
            json!([{"name": "spread", "tier": 9}, {"name": "las"}]),
            "policy.plugins[0]",
        ),
    ] {
        let bad = json!({"nodes": [{"name": "n1", "cpus": 2}], "policy": {"plugins": plugins}});
        for op in ["configure", "reconfigure"] {
            let reply = send(&mut shim, json!({"op": op, "cluster": bad}));
            assert_eq!(reply["ok"], false, "{op}: {reply}");
            assert_eq!(reply["error"]["kind"], "invalid_config", "{op}: {reply}");
            let message = reply["error"]["message"].as_str().unwrap();
            assert!(
                message.starts_with(&format!("cluster.{field}")),
                "{op}: {message}"
            );
            assert_eq!(send(&mut shim, json!({"op": "snapshot"})), before, "{op}");
        }
    }
    // The scheduler goes on with its shortest-first profile.
    let out = send(
        &mut shim,
        json!({"op": "tick", "at_ms": 1000, "events": [{"type": "finished", "job": "run", "outcome": "completed"}]}),
    );
    assert_eq!(out["decisions"][0]["job"], "short", "{out}");
}

// ---------------------------------------------------------------------------------------------
// The zoo

#[test]
fn shortest_first_orders_by_time_limit_then_submit_time() {
    let mut s = with(one_node(1), build(Profile::builder().plugin(ShortestFirst)));
    let job = |id: &str, limit| submit(JobSpec::new(id, limit, 1));
    tick(
        &mut s,
        0,
        vec![
            job("blocker", 100),
            job("long", 900),
            job("short", 300),
            job("short-too", 300),
        ],
    );
    assert_eq!(order(&s), ["short", "short-too", "long"]);
    let out = tick(&mut s, 100, vec![finished("blocker")]);
    assert_eq!(started(&out.decisions), ["short"]);
}

/// LAS with one threshold at 60 GPU-seconds, a 10 s quantum and promotion after as long as
/// the last run, on one GPU, with order-based preemption.
fn las_cluster(anti_thrash: bool) -> (Value, Las) {
    let las = Las {
        thresholds_gpu_ms: vec![60_000],
        min_quantum_ms: 10_000,
        promote_after: 1.0,
    };
    (
        order_based(json!({"nodes": gpu_nodes(&[1])}), anti_thrash),
        las,
    )
}

#[test]
fn las_demotes_at_its_threshold_wakes_up_for_it_and_promotes_a_starved_job() {
    let (cluster, las) = las_cluster(false);
    let mut s = with(cluster, build(Profile::builder().plugin(las)));
    tick(&mut s, 0, vec![gpus("a", 1)]);
    // `w` waits in queue 0 beside `a` (also queue 0): no preemption; LAS wakes up when a
    // crosses the threshold (1 GPU for 60 s). The end of a's quantum asks for no tick: no
    // preemptor was held back by it.
    let out = tick(&mut s, 1_000, vec![gpus("w", 1)]);
    assert!(preempts(&out).is_empty());
    assert_eq!(out.next_wakeup_ms, Some(60_000));
    // At 60 s `a` is in queue 1 and past its quantum: `w` takes the GPU.
    let out = tick(&mut s, 60_000, vec![]);
    assert_eq!(preempts(&out), [("a", "w")]);
    let out = tick(
        &mut s,
        61_000,
        vec![event(json!({"type": "stopped", "job": "a"}))],
    );
    assert_eq!(started(&out.decisions), ["w"]);
    let a = s.state().job_by_name("a").unwrap();
    assert_eq!(
        (a.attained_gpu_ms(), a.last_run()),
        (61_000, Some((0, 61_000)))
    );
    // Next: w crosses the threshold at 121 s, a is promoted at 122 s (it has waited as long
    // as it ran). `a` (queue 1) has no basis to preempt `w` (queue 0), so w's quantum is
    // never asked and its end asks for nothing.
    assert_eq!(out.next_wakeup_ms, Some(121_000));
    let out = tick(&mut s, 121_000, vec![]);
    assert!(preempts(&out).is_empty(), "both in queue 1");
    assert_eq!(out.next_wakeup_ms, Some(122_000));
    let out = tick(&mut s, 122_000, vec![]);
    assert_eq!(preempts(&out), [("w", "a")]);
}

#[test]
fn las_orders_the_least_served_queue_first() {
    let (cluster, mut las) = las_cluster(true);
    las.promote_after = 0.0;
    let mut s = with(cluster, build(Profile::builder().plugin(las)));
    tick(&mut s, 0, vec![gpus("served", 1)]);
    tick(&mut s, 1_000, vec![gpus("w", 1)]);
    assert_eq!(preempts(&tick(&mut s, 60_000, vec![])), [("served", "w")]);
    tick(
        &mut s,
        61_000,
        vec![event(json!({"type": "stopped", "job": "served"}))],
    );
    // `served` (60 GPU-seconds, queue 1) was submitted first, `fresh` (queue 0) last.
    tick(&mut s, 62_000, vec![gpus("fresh", 1)]);
    assert_eq!(order(&s), ["fresh", "served"]);
    let keys: Vec<(String, i64)> = s
        .priorities()
        .into_iter()
        .map(|p| (p.job.clone(), p.keys[0].key))
        .collect();
    assert_eq!(keys, [("fresh".to_string(), 0), ("served".to_string(), -1)]);
}

#[test]
fn las_guards_a_run_for_its_quantum() {
    let (cluster, mut las) = las_cluster(true);
    las.thresholds_gpu_ms = vec![1_000];
    let mut s = with(cluster, build(Profile::builder().plugin(las)));
    tick(&mut s, 0, vec![gpus("a", 1)]);
    // At 5 s `a` is in queue 1, `w` in queue 0, but a's quantum runs to 10 s.
    let out = tick(&mut s, 5_000, vec![gpus("w", 1)]);
    assert!(preempts(&out).is_empty());
    assert_eq!(out.next_wakeup_ms, Some(10_000));
    assert_eq!(preempts(&tick(&mut s, 10_000, vec![])), [("a", "w")]);
}

#[test]
fn min_run_time_guards_each_run_and_wakes_up_when_the_guard_ends() {
    let profile = || {
        build(
            Profile::builder()
                .plugin(by_priority())
                .plugin(MinRunTime::new(30_000)),
        )
    };
    let mut s = with(order_based(one_node(1), false), profile());
    tick(&mut s, 0, vec![prio("low", 0)]);
    // No pending job: no guard wake-up (the time limit's stands).
    assert_eq!(s.next_wakeup(), Some(3_600_000));
    let out = tick(&mut s, 10_000, vec![prio("high", 5)]);
    assert!(preempts(&out).is_empty());
    assert_eq!(out.next_wakeup_ms, Some(30_000));
    assert_eq!(preempts(&tick(&mut s, 30_000, vec![])), [("low", "high")]);
    // The guard counts from each run's start: `low` restarts at 40 s and, raised above
    // `high`, waits for its own guard to end before preempting it (anti-thrash is off).
    let stopped = event(json!({"type": "stopped", "job": "low"}));
    assert_eq!(
        started(&tick(&mut s, 31_000, vec![stopped]).decisions),
        ["high"]
    );
    let raise = event(json!({"type": "set_priority", "job": "low", "priority": 9}));
    let out = tick(&mut s, 40_000, vec![raise]);
    assert!(preempts(&out).is_empty());
    assert_eq!(out.next_wakeup_ms, Some(61_000));
    assert_eq!(preempts(&tick(&mut s, 61_000, vec![])), [("high", "low")]);
}

#[test]
fn least_lost_work_takes_the_victim_with_the_freshest_checkpoint() {
    let run = |checkpoint: bool| {
        let profile = build(
            Profile::builder()
                .plugin(by_priority())
                .plugin(LeastLostWork),
        );
        let mut s = with(order_based(one_node(2), true), profile);
        tick(&mut s, 0, vec![prio("older", 0)]);
        tick(&mut s, 1_000, vec![prio("newer", 0)]);
        if checkpoint {
            tick(
                &mut s,
                50_000,
                vec![event(json!({"type": "checkpoint", "job": "older"}))],
            );
            let older = s.state().job_by_name("older").unwrap();
            assert_eq!(older.since_checkpoint_ms(), Some(0));
        }
        let out = tick(&mut s, 60_000, vec![prio("high", 5)]);
        preempts(&out)[0].0.to_string()
    };
    // Without checkpoints a stop loses the work since the start: the newer job loses least.
    assert_eq!(run(false), "newer");
    // The older one checkpointed 10 s ago; the newer one would lose 59 s.
    assert_eq!(run(true), "older");
}

#[test]
fn binpack_fills_the_fullest_node_and_spread_the_emptiest() {
    // n1: 8 GPUs, 4 of them used; n2: 2 GPUs, free. Best fit (fewest free GPUs) takes n2,
    // binpack the node with the largest used fraction.
    let lands = |profile: Profile| {
        let mut s = with(json!({"nodes": gpu_nodes(&[8, 2])}), profile);
        assert_eq!(
            node_of(&tick(&mut s, 0, vec![gpus("filler", 4)]), "filler"),
            "n1"
        );
        node_of(&tick(&mut s, 1_000, vec![gpus("j", 1)]), "j").to_string()
    };
    assert_eq!(lands(Profile::default_for_config()), "n2");
    assert_eq!(
        lands(build(Profile::builder().scorer(BinPack, 0, 1.0))),
        "n1"
    );
    // n1: 4 GPUs, free; n2: 2 GPUs, 1 used. Best fit takes n2, spread the node with the
    // largest free fraction.
    let lands = |profile: Profile| {
        let mut s = with(json!({"nodes": gpu_nodes(&[4, 2])}), profile);
        assert_eq!(
            node_of(&tick(&mut s, 0, vec![gpus("filler", 1)]), "filler"),
            "n2"
        );
        node_of(&tick(&mut s, 1_000, vec![gpus("j", 1)]), "j").to_string()
    };
    assert_eq!(lands(Profile::default_for_config()), "n2");
    assert_eq!(
        lands(build(Profile::builder().scorer(Spread, 0, 1.0))),
        "n1"
    );
}

#[test]
fn avoid_gpu_faults_keeps_jobs_off_recently_failed_nodes() {
    let profile = || build(Profile::builder().plugin(AvoidGpuFaults::within_ms(10_000)));
    let mut s = with(two_gpu_nodes(), profile());
    tick(
        &mut s,
        0,
        vec![event(json!({"type": "gpu_down", "node": "n1", "gpu": 0}))],
    );
    tick(
        &mut s,
        1_000,
        vec![event(json!({"type": "gpu_up", "node": "n1", "gpu": 0}))],
    );
    // The node remembers the fault after the GPU came back.
    let n1 = s.state().node_by_name("n1").unwrap();
    assert_eq!(
        (n1.gpu_faults().len(), n1.last_gpu_fault_ms()),
        (1, Some(0))
    );
    // Best fit would take n1.
    assert_eq!(node_of(&tick(&mut s, 2_000, vec![gpus("a", 1)]), "a"), "n2");
    // The window is over at 10 s.
    assert_eq!(
        node_of(&tick(&mut s, 10_000, vec![gpus("b", 1)]), "b"),
        "n1"
    );

    // Both nodes failed: the job waits, told why.
    let mut s = with(two_gpu_nodes(), profile());
    let down = |node: &str| event(json!({"type": "gpu_down", "node": node, "gpu": 1}));
    let up = |node: &str| event(json!({"type": "gpu_up", "node": node, "gpu": 1}));
    tick(&mut s, 0, vec![down("n1"), down("n2"), up("n1"), up("n2")]);
    tick(&mut s, 500, vec![gpus("j", 1)]);
    assert_eq!(
        pending(&s, "j").detail.as_deref(),
        Some(
            "no node passed the filters for group 0: avoid_gpu_faults: a GPU failed at 0 ms (2 nodes)"
        )
    );
}
