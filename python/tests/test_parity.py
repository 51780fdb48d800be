"""Parity: every scenario of gangway/tests/scenarios/ and ../shared/scenarios (when present) replayed
through `gangway shim` (the release binary) and through the bindings gives identical responses.

Each scenario becomes one request sequence: configure; per tick, the tick, explain, explain with
detail, a what_if, a snapshot; then requests that are refused (a tick back in time, a bad
reconfigure, a bad restore), a restore of the last snapshot and an explain of the restored
scheduler. The shim answers the lines; the bindings answer the same requests as method calls,
a GangwayError standing for {"ok": false, "error": {kind, message, path}}.
"""

import json
import os
import subprocess

import pytest

import gangway
from conftest import REPO, shim_binary, wire_path

SCENARIO_DIRS = [REPO / "gangway" / "tests" / "scenarios", REPO.parent / "shared" / "scenarios"]


def scenarios():
    found = []
    for directory in SCENARIO_DIRS:
        if directory.is_dir():
            found.extend(sorted(directory.glob("*.json")))
    return found


def ids(path):
    return f"{path.parent.parent.name}/{path.stem}"


PROBE = {"id": "parity-probe", "time_limit_ms": 60_000, "groups": [{"count": 1, "cpus": 1}]}


def requests_of(scenario):
    """The request sequence; a snapshot's state is filled in by `last_snapshot`."""
    out = [{"op": "configure", "cluster": scenario["cluster"]}]
    last_at = 0
    for tick in scenario["ticks"]:
        out.append({"op": "tick", "at_ms": tick["at_ms"], "events": tick["events"]})
        out.append({"op": "explain"})
        out.append({"op": "explain", "at_ms": tick["at_ms"], "detail": True})
        out.append({"op": "what_if", "job": PROBE})
        out.append({"op": "snapshot"})
        last_at = tick["at_ms"]
    if last_at > 0:
        out.append({"op": "tick", "at_ms": last_at - 1, "events": []})
    out.append({"op": "explain", "at_ms": 0})
    out.append({"op": "reconfigure", "cluster": {"nodes": [], "queues": [{"name": ""}]}})
    out.append({"op": "restore", "state": {"state": None}})
    out.append({"op": "restore", "state": "LAST_SNAPSHOT"})
    out.append({"op": "explain", "detail": True})
    out.append({"op": "tick", "at_ms": last_at + 3_600_000, "events": []})
    return out


def through_shim(binary, requests):
    process = subprocess.Popen([str(binary), "shim"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    responses = []
    last = None
    try:
        for request in requests:
            if request.get("state") == "LAST_SNAPSHOT":
                request = dict(request, state=last)
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            response = json.loads(process.stdout.readline())
            if request["op"] == "snapshot":
                last = response["state"]
            responses.append(response)
    finally:
        process.stdin.close()
        assert process.wait(timeout=30) == 0
    return responses


def through_bindings(requests):
    responses = []
    scheduler = None
    last = None
    for request in requests:
        op = request["op"]
        try:
            if op == "configure":
                scheduler = gangway.Scheduler(request["cluster"])
                response = {"ok": True, "protocol": gangway.PROTOCOL_VERSION}
            elif op == "tick":
                response = scheduler.tick(request["at_ms"], request["events"])
            elif op == "explain":
                response = scheduler.explain(at_ms=request.get("at_ms"),
                                             detail=request.get("detail", False))
            elif op == "what_if":
                response = scheduler.what_if(request["job"])
            elif op == "snapshot":
                last = scheduler.snapshot()
                response = {"ok": True, "state": last}
            elif op == "reconfigure":
                scheduler.reconfigure(request["cluster"])
                response = {"ok": True}
            elif op == "restore":
                state = last if request["state"] == "LAST_SNAPSHOT" else request["state"]
                scheduler = gangway.Scheduler.restore(state)
                response = {"ok": True}
            else:
                raise AssertionError(op)
        except gangway.GangwayError as e:
            error = {"kind": e.kind, "message": e.message}
            if e.path:
                error["path"] = wire_path(e.path)
            response = {"ok": False, "error": error}
        responses.append(response)
    return responses


@pytest.fixture(scope="module")
def binary():
    path = shim_binary()
    if path is None:
        if os.environ.get("GANGWAY_REQUIRE_SHIM"):
            pytest.fail("no release gangway binary: cargo build --release -p gangway-cli")
        pytest.skip("no release gangway binary (cargo build --release -p gangway-cli, or set "
                    "GANGWAY_BIN)")
    return path


def test_the_shared_scenarios_are_found_when_required():
    if os.environ.get("GANGWAY_REQUIRE_SHARED"):
        assert SCENARIO_DIRS[1].is_dir(), "../shared/scenarios is missing"


@pytest.mark.parametrize("path", scenarios(), ids=ids)
def test_parity(binary, path):
    scenario = json.loads(path.read_text())
    requests = requests_of(scenario)
    shim = through_shim(binary, requests)
    bindings = through_bindings(requests)
    assert len(shim) == len(bindings)
    for request, a, b in zip(requests, shim, bindings):
        assert a == b, f"{path.name}: {request['op']} differs"
    # The refusals really were refused.
    assert sum(1 for r in shim if not r["ok"]) >= 2
