#!/usr/bin/env python3
"""Latency of an empty `tick` through `gangway shim` on the Slurm peer's 2,000-job mix
(issue 17's harness): the mix is submitted on 4 nodes of 8 cpus and 4 GPUs under conservative
backfill, then 40 empty ticks 1 ms apart are sent one at a time; prints the median round trip
of the last 30 (JSON encoding, the pipe and the pass included).

    python3 gangway-bench/benches/shim/empty_tick.py target/release/gangway ../shared/peers/slurm/scenarios/perf_2000.jobs

The sbatch lines are read as `benches/backfill.rs` reads them (one strict-spread group of -N
tasks, --ntasks-per-node cpus and 2,000 MiB each, --gres=gpu:G GPUs each, -t minutes).
"""
import json
import statistics
import subprocess
import sys
import time

lines = [l for l in open(sys.argv[2]) if l.startswith("sbatch")]
def job(line):
    t = line.split(); i = 0; d = dict(id="", nodes=1, per=1, gpus=0, minutes=1, prio=0)
    while i < len(t):
        x = t[i]
        if x == "-J": d["id"] = t[i+1]; i += 1
        elif x == "-t": d["minutes"] = int(t[i+1]); i += 1
        elif x.startswith("-N"): d["nodes"] = int(x[2:])
        elif x.startswith("--ntasks-per-node="): d["per"] = int(x.split("=")[1])
        elif x.startswith("--gres=gpu:"): d["gpus"] = int(x.split(":")[1])
        elif x.startswith("--priority="): d["prio"] = int(x.split("=")[1])
        i += 1
    return {"id": d["id"], "time_limit_ms": d["minutes"]*60000, "priority": d["prio"],
            "groups": [{"count": d["nodes"], "cpus": d["per"], "memory_mib": 2000*d["per"],
                        "gpus": d["gpus"], "placement": "strict_spread"}]}
nodes = [{"name": f"n{i}", "cpus": 8, "memory_mib": 64000, "gpus": {"model": "gpu", "count": 4}} for i in range(1, 5)]
p = subprocess.Popen([sys.argv[1], "shim"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
def ask(req):
    p.stdin.write(json.dumps(req) + "\n"); p.stdin.flush()
    return json.loads(p.stdout.readline())
assert ask({"op": "configure", "cluster": {"nodes": nodes, "policy": {"backfill": {"mode": "conservative"}}}})["ok"]
r = ask({"op": "tick", "at_ms": 0, "events": [{"type": "submit", "job": job(l)} for l in lines]})
assert r["ok"], r
times = []
for k in range(40):
    t0 = time.perf_counter(); r = ask({"op": "tick", "at_ms": 1 + k, "events": []}); times.append(time.perf_counter() - t0)
    assert r["ok"]
print(f"{len(lines)} jobs; empty tick through the shim: median {statistics.median(times[10:])*1000:.3f} ms over {len(times[10:])}, min {min(times)*1000:.3f} ms")
