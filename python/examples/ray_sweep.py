"""Policies x traces x seeds on a local Ray cluster (docs/simulate.md, "Sweeps on Ray").

Starts Ray with 2 cpus on loopback, runs one simulation per task: the KTH SP2 trace committed
with the repository (200 jobs) and 1,000 jobs of the built-in gpu-ml workload, seeds 1 and 2
(the seed draws gpu-ml's jobs and, with faults=True, the node faults injected into both), under
fcfs, easy and conservative. Checks that the table equals the in-process sweep's, then prints
the mean wait per trace and policy, averaged over the seeds.

    pip install ray ./python && python python/examples/ray_sweep.py

On a real cluster, connect with ray.init(address="auto") instead: the same call runs there.
"""

import pathlib
import statistics
from typing import List, TypedDict

import ray

import gangway

TRACE = (pathlib.Path(__file__).resolve().parents[2] / "gangway-sim" / "tests" / "fixtures"
         / "KTH-SP2-1996-2.1-cln-first200.swf")


class Grid(TypedDict):
    """The arguments of gangway.sweep_traces this example runs."""

    traces: List[str]
    policies: List[str]
    seeds: List[int]
    jobs: int
    faults: bool


GRID: Grid = {
    "traces": [str(TRACE), "gpu-ml"],
    "policies": ["fcfs", "easy", "conservative"],
    "seeds": [1, 2],
    "jobs": 1000,
    "faults": True,
}


def main() -> None:
    # A cluster of its own ("local"), never one already running here.
    ray.init(address="local", num_cpus=2, include_dashboard=False,
             _node_ip_address="127.0.0.1", log_to_driver=False)
    try:
        table = gangway.sweep_traces(**GRID, executor="ray")
    finally:
        ray.shutdown()
    assert table == gangway.sweep_traces(**GRID), "Ray's table differs from the in-process one"
    print(f"{len(table)} simulations on Ray, equal to the in-process run")
    print(f"{'trace':<40} {'policy':<13} {'mean wait (s)':>13} {'utilization':>11}")
    for trace in GRID["traces"]:
        for policy in GRID["policies"]:
            rows = [r for r in table if r["trace"] == trace and r["policy"] == policy]
            wait = statistics.mean(r["wait_mean_s"] for r in rows)
            use = statistics.mean(r["utilization"] for r in rows)
            print(f"{pathlib.Path(trace).name:<40} {policy:<13} {wait:>13.0f} {use:>11.2f}")


if __name__ == "__main__":
    main()
