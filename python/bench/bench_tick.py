#!/usr/bin/env python3
"""Speed of the Python bindings (BENCHMARKS.md, "Python bindings").

    python python/bench/bench_tick.py [--repeat N]

1. A tick of 1,000 submits on an empty 64-node x 8-GPU cluster: the time in the bindings
   (Python objects to Rust values, the response back to Python objects) against the time of the
   shim's handling (the Rust tick, with the parsing of the events), from
   `Scheduler._last_timings()`; the median of N fresh schedulers.
2. An empty tick on a scheduler with those 1,000 jobs (running and pending): total per call.
3. A Python order-key hook: cost per call, from a pass over 1,000 pending jobs with and without
   the hook.
"""

import argparse
import statistics
import time

import gangway

CLUSTER = {"nodes": [{"name": f"n{i:02}", "cpus": 64, "memory_mib": 512_000,
                      "gpus": {"model": "h100", "count": 8}} for i in range(64)]}


def submits(count, prefix="j"):
    return [{"type": "submit", "job": {
        "id": f"{prefix}{i}", "account": None, "time_limit_ms": 3_600_000 + i,
        "groups": [{"count": 1 + i % 2, "cpus": 4, "memory_mib": 16_000, "gpus": 1 + i % 8}]}}
        for i in range(count)]


def thousand_submits(repeat):
    rows = []
    for _ in range(repeat):
        s = gangway.Scheduler(CLUSTER)
        events = submits(1000)
        started = time.perf_counter_ns()
        out = s.tick(0, events)
        total = time.perf_counter_ns() - started
        t = s._last_timings()
        rows.append((total, t["to_rust_ns"], t["handle_ns"], t["to_python_ns"]))
    decisions = len(out["decisions"])
    total, to_rust, handle, to_python = (statistics.median(c) for c in zip(*rows))
    print(f"tick of 1,000 submits ({decisions} starts), median of {repeat}:")
    print(f"  total call            {total / 1e3:9.0f} us")
    print(f"  Python -> Rust        {to_rust / 1e3:9.0f} us")
    print(f"  shim handling (tick)  {handle / 1e3:9.0f} us")
    print(f"  Rust -> Python        {to_python / 1e3:9.0f} us")
    print(f"  bindings / tick       {(to_rust + to_python) / handle:9.2f}")


def empty_tick(repeat, jobs):
    s = gangway.Scheduler(CLUSTER)
    s.tick(0, submits(jobs))
    at = 1
    for _ in range(1000):  # warm up
        s.tick(at)
        at += 1
    samples = []
    for _ in range(repeat):
        started = time.perf_counter_ns()
        for _ in range(1000):
            s.tick(at)
            at += 1
        samples.append((time.perf_counter_ns() - started) / 1000)
    handles = []
    for _ in range(1000):
        s.tick(at)
        at += 1
        handles.append(s._last_timings()["handle_ns"])
    print(f"empty tick ({jobs:,} jobs held), median of {repeat} x 1,000: "
          f"{statistics.median(samples) / 1e3:.1f} us per call "
          f"(shim handling: mean {statistics.mean(handles) / 1e3:.1f} us, median {statistics.median(handles) / 1e3:.1f} us)")


def hook_cost(repeat):
    small = {"nodes": [{"name": "n1", "cpus": 1}]}
    calls = [0]

    def key(job):
        calls[0] += 1
        return -job["time_limit_ms"]

    def pass_time(plugins):
        samples = []
        for _ in range(repeat):
            s = gangway.Scheduler(small, plugins=plugins)
            s.tick(0, [{"type": "submit", "job": {"id": f"p{i}", "time_limit_ms": 1000 + i,
                                                  "groups": [{"count": 1}]}} for i in range(1000)])
            started = time.perf_counter_ns()
            s.tick(1, [{"type": "submit", "job": {"id": "x", "time_limit_ms": 10,
                                                  "groups": [{"count": 1}]}}])
            samples.append(time.perf_counter_ns() - started)
        return statistics.median(samples)

    plain = pass_time([])
    calls[0] = 0
    hooked = pass_time([gangway.Plugin("py_key", order_key=key)])
    per_pass = calls[0] / repeat / 2  # two ticks per sample, the second measured
    print(f"Python order key: {per_pass:.0f} calls per pass, "
          f"{(hooked - plain) / per_pass / 1e3:.2f} us per call "
          f"(pass {plain / 1e3:.0f} us without, {hooked / 1e3:.0f} us with)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    thousand_submits(args.repeat)
    empty_tick(args.repeat, 0)
    empty_tick(args.repeat, 1000)
    hook_cost(args.repeat)


if __name__ == "__main__":
    main()
