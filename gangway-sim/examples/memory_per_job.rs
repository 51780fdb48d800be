//! Memory per pending job on the standard workload (docs/design.md, section Performance targets):
//! a counting global allocator reads the bytes allocated before one million pending jobs are
//! generated and after they have been submitted to a full 1,000-node cluster (the submitted
//! events are consumed, so what stays allocated is the scheduler's), and prints the difference
//! per job. Everything the scheduler keeps for a pending job counts: its spec, compiled shapes,
//! indexes, priority inputs and its line in the per-pass report.
//!
//!     cargo run --release -p gangway-sim --example memory_per_job [-- JOBS]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use gangway_sim::standard::StandardWorkload;

/// The system allocator, counting the bytes currently allocated.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn main() {
    let jobs: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("JOBS must be a number"))
        .unwrap_or(1_000_000);
    let mut workload = StandardWorkload::new(1_000, 42);
    let mut scheduler = workload.loaded_scheduler(0);
    let before = LIVE.load(Ordering::Relaxed);
    let pending = workload.pending(jobs);
    let out = scheduler.tick(2_000, pending).expect("tick");
    assert!(out.rejected.is_empty(), "{:?}", out.rejected.first());
    drop(out);
    let held = LIVE.load(Ordering::Relaxed) as f64 - before as f64;
    println!(
        "{} pending jobs: {:.1} MiB held by the scheduler, {:.0} bytes per pending job",
        scheduler.state().pending_count(),
        held / (1024.0 * 1024.0),
        held / jobs as f64
    );
}
