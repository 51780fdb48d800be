//! GPU allocation on the Alibaba GPU-sharing trace of 2023, judged as Weng et al., "Beware of
//! Fragmentation" (USENIX ATC 2023): plain best fit against gangway's placement rule.
//!
//! The cluster is the trace's 1,213 GPU nodes; the workload its default pod list (every pod, as
//! the paper's simulator takes it: fractions of one GPU, whole GPUs, cpu-only pods). For each
//! seed 42–51 every pod arrives once in a seeded random order, then pods drawn with replacement
//! until the GPUs asked for reach 130% of the cluster's. Pods arrive one at a time and never
//! leave; one that fits nowhere is dropped. The metric is the share of GPU capacity allocated
//! when the GPUs asked for reach 100%, averaged over the seeds.
//!
//! Each pod is placed by `gangway::placement::place_gang` with the candidates and the capacity
//! view the scheduler uses for a job starting now; gangway's rule is the scheduler's: the
//! fragmentation of the shapes submitted so far ([`ShapeMix`], fed one pod at a time as the
//! scheduler feeds it at submit), with the default profile's fragmentation-aware device choice
//! (`gangway::policy::builtin::FragmentationAware`, here as a small [`NodeGate`]). Best fit is
//! the same call with an empty mix.
//!
//! Run: `cargo run --release -p gangway-sim --example fragmentation [TRACE_DIR]`
//! (default: `../shared/traces/alibaba-gpu-2023` beside the checkout; without it and without
//! TRACE_DIR the example prints a note and does nothing).

#[path = "../../gangway/tests/engine/common/shared.rs"]
mod shared;

use std::error::Error;
use std::fs::File;
use std::path::{Path, PathBuf};

use gangway::model::{
    DomainId, GpuNeed, ModelId, ModelMask, Node, NodeAmounts, NodeId, PartitionId, PartitionSet,
    TaskShape,
};
use gangway::placement::{
    CapacityView, FreeIndex, FreeTotals, GangRequest, IndexCandidates, NodeGate, Reach, ShapeMix,
    least_fragmenting_device, place_gang,
};
use gangway_sim::workload::alibaba;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

const SEEDS: std::ops::RangeInclusive<u64> = 42..=51;

/// One pod: its task shape and the GPU thousandths it asks for.
struct Pod {
    shape: TaskShape,
    gpu_milli: u64,
}

/// What is free now on an up node: the view the scheduler places a job starting now with when
/// no reservation exists.
struct FreeNow;

/// The fragmentation-aware device choice of a fraction, as the default profile makes it; every
/// node admitted, in the visit order.
struct FragmentationAware<'a> {
    nodes: &'a [Option<Node>],
    shape: &'a TaskShape,
}

impl NodeGate for FragmentationAware<'_> {
    fn filters(&self) -> bool {
        false
    }
    fn admits(&self, _: usize, _: NodeId) -> bool {
        true
    }
    fn ranks(&self) -> bool {
        false
    }
    fn rank(&self, _: usize, _: &mut Vec<NodeId>) {}
    fn choose_devices(
        &self,
        _: usize,
        id: NodeId,
        room: &NodeAmounts,
        mix: &ShapeMix,
    ) -> Option<u128> {
        let GpuNeed::Fraction(f) = self.shape.gpu else {
            return None;
        };
        let node = self.nodes[id.index()].as_ref()?;
        least_fragmenting_device(node, room, f, mix).map(|index| 1 << index)
    }
    fn rank_domains(&self, _: &mut Vec<DomainId>, _: &[FreeTotals]) {}
}

impl CapacityView for FreeNow {
    fn free(&self, _id: NodeId, node: &Node) -> Option<NodeAmounts> {
        node.accepts_work().then(|| node.free())
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let dir = match std::env::args().nth(1) {
        Some(dir) => PathBuf::from(dir),
        None => match shared::path("traces/alibaba-gpu-2023") {
            Some(dir) => dir,
            None => return Ok(()),
        },
    };
    let trace_nodes = alibaba::read_nodes(File::open(dir.join("openb_node_list_gpu_node.csv"))?)?;
    let mut models: Vec<String> = Vec::new();
    let mut nodes = Vec::new();
    for n in &trace_nodes {
        let model = n.gpu_model.as_ref().map(|name| {
            let at = models.iter().position(|m| m == name).unwrap_or_else(|| {
                models.push(name.clone());
                models.len() - 1
            });
            ModelId(at as u32)
        });
        let capacity = NodeAmounts::full(n.cpus_milli, n.memory_mib, n.gpus as usize);
        let node = Node::new(n.name.clone(), capacity, n.gpus as usize, model);
        nodes.push(Some(node.with_partitions(PartitionSet(1))));
    }
    let capacity: u64 = trace_nodes.iter().map(|n| u64::from(n.gpus) * 1000).sum();
    let pods = read_pods(&dir.join("openb_pod_list_default.csv"), &models)?;
    println!(
        "Alibaba GPU 2023: {} GPU nodes, {} GPUs, {} pods; seeds {}-{}",
        trace_nodes.len(),
        capacity / 1000,
        pods.len(),
        SEEDS.start(),
        SEEDS.end()
    );
    println!("| rule                  | GPU allocated at 100% arrived |");
    println!("|-----------------------|-------------------------------|");
    for (name, fragmentation_aware) in [("best fit", false), ("gangway (default)", true)] {
        let mut sum = 0.0;
        for seed in SEEDS {
            sum += run(&nodes, &models, &pods, capacity, seed, fragmentation_aware);
        }
        let mean = sum / SEEDS.count() as f64;
        println!("| {name:<21} | {:>28.2}% |", 100.0 * mean);
    }
    Ok(())
}

/// One seed: the allocated share of GPU capacity when arrived demand reaches 100%.
fn run(
    initial: &[Option<Node>],
    models: &[String],
    pods: &[Pod],
    capacity: u64,
    seed: u64,
    fragmentation_aware: bool,
) -> f64 {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut order: Vec<usize> = (0..pods.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.random_range(0..=i));
    }
    let mut nodes = initial.to_vec();
    let mut index = FreeIndex::build(&nodes, models.len());
    let mut mix = ShapeMix::default();
    let plain = ShapeMix::default();
    let (mut arrived, mut allocated) = (0u64, 0u64);
    let mut at_full = None;
    let mut next = 0;
    while arrived * 10 < capacity * 13 {
        let pod = match order.get(next) {
            Some(i) => &pods[*i],
            None => &pods[rng.random_range(0..pods.len())],
        };
        next += 1;
        arrived += pod.gpu_milli;
        mix.record(&pod.shape, 1);
        let gate = FragmentationAware {
            nodes: &nodes,
            shape: &pod.shape,
        };
        let against = if fragmentation_aware { &mix } else { &plain };
        let shapes = std::slice::from_ref(&pod.shape);
        let request = GangRequest::new(shapes, PartitionId(0), against).with_gate(&gate);
        let candidates = IndexCandidates::new(&index, Reach::FreeGpus);
        if let Some(assignments) = place_gang(&nodes, &candidates, &FreeNow, request) {
            for a in assignments {
                if let Some(node) = nodes[a.node.index()].as_mut() {
                    node.used.add(&a.amounts);
                    node.running_jobs += 1;
                }
                allocated += a.amounts.devices.iter().map(|d| u64::from(*d)).sum::<u64>();
                index.refresh(&nodes, a.node);
            }
        }
        if at_full.is_none() && arrived >= capacity {
            at_full = Some(allocated as f64 / capacity as f64);
        }
    }
    at_full.unwrap_or(allocated as f64 / capacity as f64)
}

/// Every pod of the list (the time columns are not needed: pods never leave).
fn read_pods(path: &Path, models: &[String]) -> Result<Vec<Pod>, Box<dyn Error>> {
    let mut reader = csv::Reader::from_path(path)?;
    let headers = reader.headers()?.clone();
    let column = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("{}: no column {name:?}", path.display()))
    };
    let (cpu, memory, num_gpu, gpu_milli) = (
        column("cpu_milli")?,
        column("memory_mib")?,
        column("num_gpu")?,
        column("gpu_milli")?,
    );
    let spec = column("gpu_spec").ok();
    let mut pods = Vec::new();
    for (line, record) in reader.records().enumerate() {
        let record = record?;
        let number = |at: usize| -> Result<u64, Box<dyn Error>> {
            let text = record.get(at).unwrap_or("");
            text.parse()
                .map_err(|_| format!("{} line {}: {text:?}", path.display(), line + 2).into())
        };
        let (num_gpu, milli) = (number(num_gpu)?, number(gpu_milli)?);
        let (gpu, gpu_milli) = match (num_gpu, milli) {
            (0, _) => (GpuNeed::None, 0),
            (1, m) if m < 1000 => (GpuNeed::Fraction(m as u16), m),
            (k, _) => (GpuNeed::Whole(k as u16), k * 1000),
        };
        let mut mask = ModelMask::ANY;
        for name in spec.and_then(|at| record.get(at)).unwrap_or("").split('|') {
            if let Some(at) = models.iter().position(|m| m == name.trim()) {
                mask.0 |= 1u64 << at;
            }
        }
        pods.push(Pod {
            shape: TaskShape::new(number(cpu)?, number(memory)?, gpu).with_models(mask),
            gpu_milli,
        });
    }
    Ok(pods)
}
