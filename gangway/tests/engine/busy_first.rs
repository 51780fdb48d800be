//! Reservations take resources busy now (and free by their start) before resources idle now,
//! nodes and devices alike, so that the idle ones stay free for backfill: the smallest case of
//! count-based EASY that pinning by node order got wrong, and its GPU-device version. The
//! oracle runs after every tick.

use gangway::Event;
use gangway::FinishOutcome;
use gangway::Milli;
use gangway::testkit::oracle::checked_tick;
use gangway::{ClusterConfig, JobSpec, Scheduler};
use gangway::{Decision, PendingReason, TickOutcome};

/// A job of `tasks` one-cpu tasks (`gpus` whole GPUs each), limited to `limit_s` seconds.
fn job(id: &str, tasks: u32, gpus: u64, limit_s: u64) -> Event {
    let mut spec = JobSpec::new(id, limit_s * 1000, tasks);
    spec.groups[0].gpus = Milli::from_milli(gpus * 1000);
    Event::Submit { job: spec }
}

fn finished(id: &str) -> Event {
    Event::Finished {
        job: id.into(),
        outcome: FinishOutcome::Completed,
    }
}

/// The nodes (with their devices) job `id` started on in `outcome`, if it started.
fn started_on(outcome: &TickOutcome, id: &str) -> Option<Vec<(String, Vec<u32>)>> {
    outcome.decisions.iter().find_map(|d| match d {
        Decision::Start { job, placement } if job == id => Some(
            placement
                .iter()
                .map(|p| (p.node.to_string(), p.gpus.clone()))
                .collect(),
        ),
        _ => None,
    })
}

fn easy(nodes: &str) -> Scheduler {
    let cluster: ClusterConfig = serde_json::from_str(&format!(
        r#"{{"nodes": {nodes}, "policy": {{"backfill": {{"mode": "easy"}}}}}}"#
    ))
    .unwrap();
    Scheduler::new(cluster).unwrap()
}

/// Four one-cpu nodes. P (2 nodes, 50 s) and A (2 nodes, 100 s) start at 0 on n1–n2 and
/// n3–n4; P ends at 50 s. H (3 nodes) arrives at 51 s, L (1 node, 1,000 s) at 52 s. Count-based
/// EASY: extra = 2 idle + 2 freed − 3 = 1, so L starts at once. H is pinned on n3, n4 (busy
/// now, free by 100 s) and one idle node; L takes the other. Pinning by node order (n1, n2,
/// n3, as Slurm 22.05 does) would leave L waiting for `priority`.
#[test]
fn a_reservation_leaves_the_idle_nodes_to_backfill() {
    let mut s = easy(
        r#"[{"name": "n1", "cpus": 1}, {"name": "n2", "cpus": 1},
            {"name": "n3", "cpus": 1}, {"name": "n4", "cpus": 1}]"#,
    );
    let out = checked_tick(&mut s, 0, vec![job("P", 2, 0, 50), job("A", 2, 0, 100)]).unwrap();
    let on = |out: &TickOutcome, id| started_on(out, id).unwrap();
    let names = |placed: Vec<(String, Vec<u32>)>| -> Vec<String> {
        placed.into_iter().map(|(node, _)| node).collect()
    };
    assert_eq!(names(on(&out, "P")), ["n1", "n2"]);
    assert_eq!(names(on(&out, "A")), ["n3", "n4"]);
    checked_tick(&mut s, 50_000, vec![finished("P")]).unwrap();
    checked_tick(&mut s, 51_000, vec![job("H", 3, 0, 10)]).unwrap();
    let out = checked_tick(&mut s, 52_000, vec![job("L", 1, 0, 1_000)]).unwrap();
    let l_node = names(on(&out, "L"));
    let pending = s.explain().pending;
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0].reason, PendingReason::Reserved);
    assert_eq!(pending[0].estimated_start_ms, Some(100_000));
    // H starts on its pins: both of A's nodes, and the idle node L left.
    let out = checked_tick(&mut s, 100_000, vec![finished("A")]).unwrap();
    let mut h_nodes = names(on(&out, "H"));
    h_nodes.sort();
    let idle = if l_node == ["n1"] { "n2" } else { "n1" };
    assert!(l_node == ["n1"] || l_node == ["n2"], "L on {l_node:?}");
    assert_eq!(h_nodes, [idle, "n3", "n4"]);
}

/// The same per device: one node of four GPUs. P (2 GPUs, 50 s) and A (2 GPUs, 100 s) start at
/// 0 on devices 0–1 and 2–3; P ends at 50 s. H (3 GPUs) is pinned on devices 2 and 3 (busy
/// now, free by 100 s) and one idle device, so L (1 GPU, 1,000 s) starts at once on the other.
#[test]
fn a_reservation_leaves_the_idle_devices_to_backfill() {
    let mut s = easy(r#"[{"name": "g1", "cpus": 8, "gpus": {"model": "a100", "count": 4}}]"#);
    let out = checked_tick(&mut s, 0, vec![job("P", 2, 1, 50), job("A", 2, 1, 100)]).unwrap();
    let devices = |placed: Option<Vec<(String, Vec<u32>)>>| -> Vec<u32> {
        let mut gpus: Vec<u32> = placed.unwrap().into_iter().flat_map(|(_, g)| g).collect();
        gpus.sort_unstable();
        gpus
    };
    assert_eq!(devices(started_on(&out, "P")), [0, 1]);
    assert_eq!(devices(started_on(&out, "A")), [2, 3]);
    checked_tick(&mut s, 50_000, vec![finished("P")]).unwrap();
    checked_tick(&mut s, 51_000, vec![job("H", 3, 1, 10)]).unwrap();
    let out = checked_tick(&mut s, 52_000, vec![job("L", 1, 1, 1_000)]).unwrap();
    let l_devices = devices(started_on(&out, "L"));
    assert_eq!(l_devices.len(), 1);
    let pending = s.explain().pending;
    assert_eq!(pending[0].reason, PendingReason::Reserved, "{pending:?}");
    let out = checked_tick(&mut s, 100_000, vec![finished("A")]).unwrap();
    let h_devices = devices(started_on(&out, "H"));
    let idle = if l_devices == [0] { 1 } else { 0 };
    assert!(l_devices == [0] || l_devices == [1], "L on {l_devices:?}");
    assert_eq!(h_devices, [idle, 2, 3]);
}
