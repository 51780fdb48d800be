#!/usr/bin/env python3
"""Notebook-style: compare scheduling policies on a trace with the Python bindings.

    pip install ./python
    python python/examples/python_compare_policies.py [TRACE.swf] [--plot FILE.png]

Default trace: the first 200 jobs of the KTH SP2 log in gangway-sim/tests/fixtures. Prints one row per
policy (mean and p95 wait, bounded slowdown, utilization) and the five jobs that waited
longest under each; with matplotlib installed and --plot, draws the wait distribution per
policy. Each "cell" below would be one cell of a notebook.
"""

import argparse
import pathlib
import sys

import gangway

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_TRACE = HERE.parents[1] / "gangway-sim" / "tests" / "fixtures" / "KTH-SP2-1996-2.1-cln-first200.swf"


def main() -> int:
    parser = argparse.ArgumentParser(description="compare policies on a trace")
    parser.add_argument("trace", nargs="?", default=str(DEFAULT_TRACE))
    parser.add_argument("--policies", default="fcfs,easy,conservative,sjf")
    parser.add_argument("--plot", help="write a wait-time plot here (needs matplotlib)")
    args = parser.parse_args()

    # Cell 1: simulate every policy on the same trace (the GIL is released while it runs;
    # Ctrl-C stops it between ticks).
    result = gangway.simulate(trace=args.trace, policies=args.policies.split(","))
    print(f"{result['workload']}: {result['jobs']} jobs on {result['nodes']} nodes")

    # Cell 2: the metrics side by side.
    print(f"{'policy':14}{'mean wait s':>12}{'p95 wait s':>12}{'slowdown':>10}{'util':>7}")
    for policy in result["policies"]:
        m = result["metrics"][policy]
        print(f"{policy:14}{m['wait']['mean_s']:>12.0f}{m['wait']['p95_s']:>12.0f}"
              f"{m['bounded_slowdown']:>10.2f}{m['utilization']:>7.2f}")

    # Cell 3: the per-job schedule is a list of records (a DataFrame with dataframe=True).
    for policy in result["policies"]:
        waited = [(r["first_start_ms"] - r["submit_ms"], r["id"])
                  for r in result["schedules"][policy] if r["first_start_ms"] is not None]
        longest = ", ".join(f"{job} ({wait // 1000} s)" for wait, job in sorted(waited)[-5:][::-1])
        print(f"longest waits under {policy}: {longest}")

    # Cell 4: plot, if matplotlib is there.
    if args.plot:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib is not installed: no plot", file=sys.stderr)
            return 0
        figure, axes = plt.subplots()
        for policy in result["policies"]:
            waits = sorted((r["first_start_ms"] - r["submit_ms"]) / 1000
                           for r in result["schedules"][policy]
                           if r["first_start_ms"] is not None)
            axes.plot(waits, [i / len(waits) for i in range(len(waits))], label=policy)
        axes.set_xscale("symlog")
        axes.set_xlabel("wait (s)")
        axes.set_ylabel("fraction of jobs")
        axes.legend()
        figure.savefig(args.plot)
        print("wrote", args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
