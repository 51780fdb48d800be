#!/usr/bin/env python3
"""Drives `gangway shim` from Python over its JSON-lines protocol (docs/protocol.md).

    python3 gangway-cli/examples/python_host.py [PATH_TO_GANGWAY]

(default `target/release/gangway`, built with `cargo build --release -p gangway-cli`).

Configures a two-node cluster of four A100s each, submits a gang job of two tasks with four
GPUs each spread over both nodes, prints every decision, and exits 1 if the gang did not start
on both nodes at once. Standard library only.
"""

import json
import subprocess
import sys

CLUSTER = {
    "nodes": [
        {"name": f"n{i}", "cpus": 32, "memory_mib": 256000,
         "gpus": {"model": "a100", "count": 4}}
        for i in (1, 2)
    ],
}

GANG = {
    "id": "train",
    "time_limit_ms": 3_600_000,
    "groups": [{"count": 2, "cpus": 8, "memory_mib": 64000, "gpus": 4,
                "placement": "strict_spread"}],
}


class Shim:
    """One `gangway shim` process: a request line in, a response line out."""

    def __init__(self, binary):
        self.process = subprocess.Popen(
            [binary, "shim"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def request(self, message):
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("gangway shim exited")
        response = json.loads(line)
        if not response.get("ok"):
            raise RuntimeError(f"{message['op']} refused: {response}")
        return response

    def close(self):
        self.process.stdin.close()
        return self.process.wait(timeout=10)


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/gangway"
    shim = Shim(binary)
    try:
        shim.request({"op": "configure", "cluster": CLUSTER})
        out = shim.request({"op": "tick", "at_ms": 0,
                            "events": [{"type": "submit", "job": GANG}]})
        for decision in out["decisions"]:
            print(json.dumps(decision, sort_keys=True))
        for rejected in out["rejected"]:
            print("rejected:", json.dumps(rejected, sort_keys=True))
    finally:
        status = shim.close()
    starts = [d for d in out["decisions"] if d["type"] == "start" and d["job"] == "train"]
    nodes = sorted(entry["node"] for s in starts for entry in s["placement"])
    if status != 0 or nodes != ["n1", "n2"]:
        print(f"the gang did not start on both nodes (placed on {nodes}, shim status {status})",
              file=sys.stderr)
        return 1
    print("gang started on", ", ".join(nodes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
