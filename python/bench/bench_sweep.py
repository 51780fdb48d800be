"""Cells per second of gangway.sweep on an executor (BENCHMARKS.md, "Sweeps on Ray").

    python python/bench/bench_sweep.py --executor ray --workers 1
    python python/bench/bench_sweep.py --executor ray --workers 2

Runs the default grid (24 cells: 4-128 GPUs x 2-16 users, 2 weeks, ssh against full) on a
local Ray cluster of `--workers` cpus (or a process pool of `--workers` processes, or in this
process on its own threads with ``--executor none``), checks that the table equals the
in-process one, and prints the best of `--repeat` runs in cells per second. The executor is
started before the clock starts: the figure is the sweep's, not Ray's start-up.
"""

import argparse
import concurrent.futures
import time

import gangway


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executor", choices=["ray", "process", "none"], default="ray")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    expected = gangway.sweep()
    cells = len(expected)
    if args.executor == "ray":
        import ray

        ray.init(address="local", num_cpus=args.workers, include_dashboard=False,
                 _node_ip_address="127.0.0.1", log_to_driver=False)
        executor = gangway.RayExecutor()
        # Workers start lazily: one warm-up sweep leaves them started and importing gangway.
        gangway.sweep(gpus=[4], users=[2], weeks=1, executor=executor)
    elif args.executor == "process":
        executor = concurrent.futures.ProcessPoolExecutor(args.workers)
        gangway.sweep(gpus=[4], users=[2], weeks=1, executor=executor)
    else:
        executor = None
    best = float("inf")
    for _ in range(args.repeat):
        start = time.perf_counter()
        table = gangway.sweep(executor=executor)
        best = min(best, time.perf_counter() - start)
        assert table == expected, "the sweep on the executor differs from the in-process one"
    workers = "this process's threads" if executor is None else f"{args.workers} worker(s)"
    print(f"{args.executor}, {workers}: {cells} cells in {best:.2f} s, "
          f"{cells / best:.1f} cells/s (best of {args.repeat})")
    if args.executor == "ray":
        ray.shutdown()
    elif executor is not None:
        executor.shutdown()


if __name__ == "__main__":
    main()
