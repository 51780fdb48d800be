"""The bindings fuzzed against the shim (issue 28, item 6), with Hypothesis.

Each example configures one `gangway shim` process (the release binary) and one
`gangway.Scheduler` alike, then makes the same requests of both: every method of `Scheduler`
(the constructor, tick, explain, what_if, snapshot, restore, reconfigure) with arguments drawn
well-typed and then, often, spoilt: a field replaced by a value of another type or out of
range (2**70, 1e300, -1, ...), removed, or joined by an unknown one. After every call:

- the shim answered `ok`: the bindings returned the same object;
- the shim refused: the bindings raised `GangwayError` with the same `kind` and `path`
  (messages are never compared), and the bindings' state is the snapshot it was before;
- no other exception, and no crash.

Values no JSON text holds (a set, a NaN, an int beyond the floats, a dict key that is not a
str) cannot be sent to the shim: the bindings must refuse them with `parse`, `.path` naming
where the value is, and change nothing. At the end of each example the two states are equal.

The module functions that take JSON-shaped arguments (`simulate`'s `cluster`) give a CLUSTER
that does not parse the shim's kind and path.

CI runs the `ci` profile (a modest number of examples, the same every run, seconds);
`GANGWAY_HYPOTHESIS_PROFILE=long` runs many more, drawn afresh.
"""

import copy
import json
import math
import os
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gangway
from conftest import shim_binary, wire_path

# CI's examples are the same at every run (derandomize): a failure there is a change, not
# luck; the long run draws afresh each time.
settings.register_profile(
    "ci", max_examples=40, deadline=None, derandomize=True,
    suppress_health_check=list(HealthCheck))
settings.register_profile(
    "long", max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("GANGWAY_HYPOTHESIS_PROFILE", "ci"))

JOBS = ["a", "b", "c", "d", "e"]
NODES = ["n1", "n2", "n3"]

BASE_CLUSTER = {
    "nodes": [
        {"name": "n1", "cpus": 8, "memory_mib": 64000, "gpus": {"model": "a100", "count": 4}},
        {"name": "n2", "cpus": 8, "memory_mib": 64000, "gpus": {"model": "a100", "count": 4}},
        {"name": "n3", "cpus": 4, "memory_mib": 32000},
    ],
    "queues": [{"name": "q1", "quota": {"gpu": {"nominal": 4}}},
               {"name": "q2", "quota": {"gpu": {"nominal": 4}}}],
    "policy": {"backfill": {"mode": "easy"}},
}


class NotJson:
    """An object no JSON text holds."""


# -- drawing well-typed values ------------------------------------------------------------------

def groups():
    return st.lists(
        st.fixed_dictionaries(
            {"count": st.integers(1, 3)},
            optional={"gpus": st.sampled_from([0, 1, 2, 4, 0.5]),
                      "cpus": st.sampled_from([1, 2, 0.25]),
                      "memory_mib": st.sampled_from([1000, 16000])}),
        min_size=1, max_size=2)


def jobs():
    return st.fixed_dictionaries(
        {"id": st.sampled_from(JOBS),
         "time_limit_ms": st.integers(1, 5_000_000),
         "groups": groups()},
        optional={"priority": st.integers(-5, 5),
                  "queue": st.sampled_from(["q1", "q2"]),
                  "requeue": st.booleans()})


def events():
    job = st.sampled_from(JOBS)
    node = st.sampled_from(NODES)
    return st.one_of(
        st.fixed_dictionaries({"type": st.just("submit"), "job": jobs()}),
        st.fixed_dictionaries({"type": st.just("finished"), "job": job,
                               "outcome": st.sampled_from(["completed", "failed"])}),
        st.fixed_dictionaries({"type": st.sampled_from(
            ["cancel", "stopped", "hold", "release", "ready", "not_ready", "checkpoint"]),
            "job": job}),
        st.fixed_dictionaries({"type": st.just("set_priority"), "job": job,
                               "priority": st.integers(-10, 10)}),
        st.fixed_dictionaries({"type": st.just("set_time_limit"), "job": job,
                               "time_limit_ms": st.integers(1, 10_000_000)}),
        st.fixed_dictionaries({"type": st.sampled_from(
            ["node_down", "node_up", "node_drain", "node_remove"]), "node": node}),
        st.fixed_dictionaries({"type": st.sampled_from(["gpu_down", "gpu_up"]), "node": node,
                               "gpu": st.integers(0, 4)}),
        st.fixed_dictionaries({"type": st.just("node_add"), "node": st.fixed_dictionaries(
            {"name": st.sampled_from(["n3", "n4"]), "cpus": st.integers(1, 8)},
            optional={"memory_mib": st.integers(0, 64000)})}),
        st.fixed_dictionaries({"type": st.just("maintenance_add"), "id": st.just("m"),
                               "nodes": st.lists(node, max_size=2),
                               "start_ms": st.integers(0, 10**6),
                               "end_ms": st.integers(0, 2 * 10**6)}),
    )


def clusters():
    return st.sampled_from([
        BASE_CLUSTER,
        {"nodes": [{"name": "x", "cpus": 2}]},
        dict(BASE_CLUSTER, policy={"backfill": {"mode": "conservative"},
                                   "preemption": {"enabled": True}}),
    ])


# -- spoiling them ------------------------------------------------------------------------------

#: Values of other types and out of range, the numbers of issue 28 among them.
ODD_VALUES = st.one_of(
    st.sampled_from([2**70, -(2**70), 2**64, 2**63, 2**53, 2**53 - 1, -1, 0, 1e300, -1e300,
                     1.5, 1e21, 0.0005, "", "x", "1", None, True, False, [], {}, [1], {"a": 1}]),
    st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=4))

#: Values no JSON text holds.
NOT_JSON = st.sampled_from([
    {1, 2}, float("nan"), float("inf"), -float("inf"), 2**1100, NotJson(), {1: "key"},
    "\ud800", b"bytes"])


def mostly(good, bad):
    """`good` four times in five, else `bad`."""
    return st.integers(0, 4).flatmap(lambda roll: bad if roll == 0 else good)


def leaves(value, path=()):
    """Every (path, value) below `value`, itself included."""
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, path + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from leaves(item, path + (i,))


def replaced(value, path, new):
    if not path:
        return new
    out = copy.copy(value)
    out[path[0]] = replaced(value[path[0]], path[1:], new)
    return out


def removed(value, path):
    out = copy.copy(value)
    if len(path) == 1:
        del out[path[0]]
    else:
        out[path[0]] = removed(value[path[0]], path[1:])
    return out


def spoilt(data, value, not_json=True):
    """`value`, or (about half the time) a copy with one thing wrong."""
    how = data.draw(st.sampled_from(
        ["keep"] * 10 + ["replace"] * 5 + ["remove", "remove", "add", "add"]
        + ["not_json" if not_json else "replace"]))
    if how == "keep":
        return value
    places = list(leaves(value))
    path, _ = data.draw(st.sampled_from(places))
    if how == "replace":
        return replaced(value, path, data.draw(ODD_VALUES))
    if how == "not_json":
        return replaced(value, path, data.draw(NOT_JSON))
    dicts = [(p, v) for p, v in places if isinstance(v, dict)]
    if how == "remove":
        keyed = [p + (k,) for p, v in dicts for k in v]
        if not keyed:
            return value
        return removed(value, data.draw(st.sampled_from(keyed)))
    if not dicts:
        return value
    path, target = data.draw(st.sampled_from(dicts))
    return replaced(value, path, dict(target, unknown_field=data.draw(ODD_VALUES)))


def not_json_at(value, path):
    """The path of the first value no JSON text holds, in the bindings' order (a dict's
    entries in turn, each key before its value), or None."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return None if _encodable(value) else path
    if isinstance(value, int):
        try:
            float(value)
        except OverflowError:
            return path
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else path
    if isinstance(value, dict):
        for key, item in value.items():
            if not (isinstance(key, str) and _encodable(key)):
                return path
            found = not_json_at(item, f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = not_json_at(item, f"{path}[{i}]")
            if found:
                return found
        return None
    return path


def _encodable(text):
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


# -- the pair -----------------------------------------------------------------------------------

class Shim:
    """One `gangway shim` process, answering request objects."""

    def __init__(self, binary):
        self.process = subprocess.Popen([str(binary), "shim"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)

    def ask(self, request):
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, "the shim ended"
        return json.loads(line)

    def close(self):
        self.process.stdin.close()
        assert self.process.wait(timeout=30) == 0


@pytest.fixture(scope="module")
def shim():
    binary = shim_binary()
    if binary is None:
        if os.environ.get("GANGWAY_REQUIRE_SHIM"):
            pytest.fail("no release gangway binary: cargo build --release -p gangway-cli")
        pytest.skip("no release gangway binary (cargo build --release -p gangway-cli, or set "
                    "GANGWAY_BIN)")
    process = Shim(binary)
    yield process
    process.close()


class Pair:
    """The shim and the bindings, driven alike."""

    def __init__(self, shim, cluster):
        self.shim = shim
        assert shim.ask({"op": "configure", "cluster": cluster})["ok"]
        self.scheduler = gangway.Scheduler(copy.deepcopy(cluster))
        self.calls = 0

    def state(self):
        return self.scheduler.snapshot()

    def call(self, request, bindings, not_json):
        """Makes `request` of the shim and `bindings()` of the bindings; checks the rule.
        `not_json`: the path of a value no JSON text holds, if any. Returns the bindings'
        answer, or None when refused."""
        self.calls += 1
        before = self.state()
        if not_json is not None:
            with pytest.raises(gangway.GangwayError) as refused:
                bindings()
            assert refused.value.kind == "parse", (request, refused.value.message)
            assert wire_path(refused.value.path) == not_json, (request, refused.value.message)
            assert self.state() == before
            return None
        answer = self.shim.ask(request)
        try:
            got = bindings()
        except gangway.GangwayError as e:
            assert not answer["ok"], (request, answer, e.kind, e.message)
            assert (e.kind, wire_path(e.path)) == (answer["error"]["kind"],
                                                   answer["error"].get("path")), \
                (request, answer, e.message)
            assert self.state() == before, request
            return None
        assert answer["ok"], (request, answer, got)
        return answer, got


@settings()
@given(data=st.data())
def test_every_method_answers_as_the_shim(shim, data):
    cluster = data.draw(clusters())
    pair = Pair(shim, cluster)
    now = 0
    snapshots = [pair.state()]
    for _ in range(data.draw(st.integers(1, 16))):
        op = data.draw(st.sampled_from(
            ["tick", "tick", "tick", "tick", "explain", "what_if", "snapshot", "restore",
             "reconfigure", "configure"]))
        if op == "tick":
            at = data.draw(mostly(st.integers(0, 5).map(lambda d: now + d * 60_000),
                                  st.one_of(st.integers(0, max(now, 1)), ODD_VALUES, NOT_JSON)))
            batch = [spoilt(data, e) for e in data.draw(st.lists(events(), max_size=6))]
            if data.draw(st.integers(0, 9)) == 0:
                batch = spoilt(data, batch)
            bad = not_json_at(at, "at_ms") or not_json_at(batch, "events")
            # `events=None` is no events.
            sent = [] if batch is None else batch
            out = pair.call({"op": "tick", "at_ms": at, "events": sent},
                            lambda: pair.scheduler.tick(at, batch), bad)
            if out is not None:
                answer, got = out
                assert got == answer
                now = answer["at_ms"]
        elif op == "explain":
            at = data.draw(mostly(st.sampled_from([None, now]),
                                  st.one_of(st.integers(0, now + 1), ODD_VALUES)))
            detail = data.draw(mostly(st.sampled_from([None, False, True]), ODD_VALUES))
            request = {"op": "explain", "at_ms": at}
            if detail is not None:
                request["detail"] = detail
            out = pair.call(request, lambda: pair.scheduler.explain(at_ms=at, detail=detail),
                            not_json_at(at, "at_ms") or not_json_at(detail, "detail"))
            if out is not None:
                assert out[1] == out[0]
        elif op == "what_if":
            job = spoilt(data, data.draw(jobs()))
            out = pair.call({"op": "what_if", "job": job}, lambda: pair.scheduler.what_if(job),
                            not_json_at(job, "job"))
            if out is not None:
                assert out[1] == out[0]
        elif op == "snapshot":
            out = pair.call({"op": "snapshot"}, pair.scheduler.snapshot, None)
            assert out[1] == out[0]["state"]
            snapshots.append(out[1])
        elif op == "restore":
            state = data.draw(st.sampled_from(snapshots))
            if data.draw(st.booleans()):
                state = spoilt(data, state, not_json=False)
            restored = []
            out = pair.call({"op": "restore", "state": state},
                            lambda: restored.append(gangway.Scheduler.restore(state)),
                            not_json_at(state, "state"))
            if out is not None:
                pair.scheduler = restored[0]
        elif op == "reconfigure":
            new = spoilt(data, data.draw(clusters()))
            out = pair.call({"op": "reconfigure", "cluster": new},
                            lambda: pair.scheduler.reconfigure(new), not_json_at(new, "cluster"))
            if out is not None:
                assert out[1] is None
        else:
            new = spoilt(data, data.draw(clusters()))
            made = []
            out = pair.call({"op": "configure", "cluster": new},
                            lambda: made.append(gangway.Scheduler(new)),
                            not_json_at(new, "cluster"))
            if out is not None:
                assert out[0] == {"ok": True, "protocol": gangway.PROTOCOL_VERSION}
                pair.scheduler = made[0]
                now = 0
    # The two went the same way.
    assert pair.shim.ask({"op": "snapshot"})["state"] == pair.state()


@given(data=st.data())
@settings(max_examples=int(os.environ.get("GANGWAY_FUZZ_SIMULATE_EXAMPLES", "15")))
def test_simulate_names_a_bad_cluster_as_the_shim(shim, data):
    cluster = data.draw(clusters())
    path, value = data.draw(st.sampled_from([(p, v) for p, v in leaves(cluster) if p]))
    # A value of another type where one was: it never parses.
    bad = replaced(cluster, path, 5 if isinstance(value, str) else "x")
    answer = shim.ask({"op": "configure", "cluster": bad})
    assert not answer["ok"]
    with pytest.raises(gangway.GangwayError) as refused:
        gangway.simulate(workload="gpu-ml", jobs=3, policies=["fcfs"], cluster=bad)
    assert (refused.value.kind, wire_path(refused.value.path)) == (
        answer["error"]["kind"], answer["error"].get("path"))


@pytest.mark.parametrize("field, value", [
    ("memory_mib", 2**70), ("memory_mib", 1e300), ("gpus", 1e300), ("gpus", 2**70),
    ("cpus", -(2**70)), ("count", 2**64),
])
def test_a_number_out_of_range_rejects_its_event_alone_with_a_path(shim, field, value):
    pair = Pair(shim, BASE_CLUSTER)
    bad = {"type": "submit", "job": {"id": "bad", "time_limit_ms": 1000,
                                     "groups": [{"count": 1, field: value}]}}
    good = {"type": "submit", "job": {"id": "good", "time_limit_ms": 1000,
                                      "groups": [{"count": 1}]}}
    out = pair.call({"op": "tick", "at_ms": 0, "events": [bad, good]},
                    lambda: pair.scheduler.tick(0, [bad, good]), None)
    answer, got = out
    assert got == answer
    assert [r["index"] for r in got["rejected"]] == [0]
    error = got["rejected"][0]["error"]
    assert error["kind"] == "invalid"
    assert error["path"] == f"events[0].job.groups[0].{field}"
    assert [d["job"] for d in got["decisions"]] == ["good"]


def test_a_time_out_of_range_names_at_ms(shim):
    pair = Pair(shim, BASE_CLUSTER)
    for at in (2**53, 2**63, 2**70, 1e300, -1, "soon"):
        assert pair.call({"op": "tick", "at_ms": at, "events": []},
                         lambda: pair.scheduler.tick(at, []), None) is None
        with pytest.raises(gangway.GangwayError) as refused:
            pair.scheduler.tick(at, [])
        assert (refused.value.kind, refused.value.path) == ("parse", ("at_ms",))


def test_a_value_json_cannot_hold_is_refused_where_it_is(shim):
    pair = Pair(shim, BASE_CLUSTER)
    for value in ({1, 2}, float("nan"), 2**1100, NotJson()):
        event = {"type": "submit", "job": {"id": "a", "time_limit_ms": 1000,
                                           "groups": [{"count": 1, "gpus": value}]}}
        pair.call(None, lambda: pair.scheduler.tick(0, [event]),
                  "events[0].job.groups[0].gpus")
    with pytest.raises(gangway.GangwayError) as refused:
        pair.scheduler.reconfigure({"nodes": [], 7: "x"})
    assert (refused.value.kind, refused.value.path) == ("parse", ("cluster",))
