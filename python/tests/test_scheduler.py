"""Every function of the bindings, every error kind, snapshot/restore round trips."""

import copy
import threading

import pytest

import gangway
from conftest import CLUSTER, job, submit, wire_path


def test_module_names():
    assert gangway.PROTOCOL_VERSION == 1
    assert "easy" in gangway.POLICIES and "fcfs" in gangway.POLICIES
    assert isinstance(gangway.__version__, str)
    for name in ("Scheduler", "Plugin", "GangwayError", "simulate"):
        assert getattr(gangway, name).__doc__


def test_tick_returns_the_shim_response(cluster):
    s = gangway.Scheduler(cluster)
    out = s.tick(0, [submit("a", gpus=2)])
    assert out == {
        "ok": True, "at_ms": 0,
        "decisions": [{"type": "start", "job": "a",
                       "placement": [{"group": 0, "node": "n1", "tasks": 1, "gpus": [0, 1]}]}],
        "rejected": [], "next_wakeup_ms": 60_000,
    }
    assert s.tick(10)["decisions"] == []
    assert s.tick(20, [])["next_wakeup_ms"] == 60_000


def test_gang_spreads_like_the_shim_example(cluster):
    s = gangway.Scheduler(cluster)
    gang = job("train", gpus=4, count=2, time_limit_ms=3_600_000)
    gang["groups"][0]["placement"] = "strict_spread"
    out = s.tick(0, [{"type": "submit", "job": gang}])
    nodes = sorted(p["node"] for d in out["decisions"] for p in d["placement"])
    assert nodes == ["n1", "n2"]


def test_rejected_events_are_listed_by_index(cluster):
    s = gangway.Scheduler(cluster)
    out = s.tick(0, [submit("a"), {"type": "submit", "job": {"id": "b"}}, submit("a")])
    kinds = [(r["index"], r["error"]["kind"]) for r in out["rejected"]]
    assert kinds == [(1, "invalid"), (2, "duplicate_job")]
    assert [d["job"] for d in out["decisions"]] == ["a"]


def test_explain_plain_and_detailed(cluster):
    s = gangway.Scheduler(cluster)
    s.tick(0, [submit("a", gpus=4, count=2), submit("b", gpus=1)])
    plain = s.explain()
    assert plain["ok"] is True
    assert [p["job"] for p in plain["pending"]] == ["b"]
    assert plain["pending"][0]["reason"] in ("reserved", "resources")
    assert set(plain) == {"ok", "pending", "running"}
    detailed = s.explain(detail=True)
    assert "shares" in detailed and "priorities" in detailed
    assert s.explain(at_ms=5)["pending"] == plain["pending"]


def test_what_if_changes_nothing(cluster):
    s = gangway.Scheduler(cluster)
    s.tick(0, [submit("a", gpus=4, count=2)])
    before = s.snapshot()
    answer = s.what_if(job("b"))
    assert answer["ok"] is True and answer["start_ms"] == 60_000
    assert s.snapshot() == before


def test_snapshot_restore_round_trip(cluster):
    s = gangway.Scheduler(cluster)
    s.tick(0, [submit("a", gpus=4, count=2), submit("b", gpus=2), submit("c", gpus=1)])
    state = s.snapshot()
    r = gangway.Scheduler.restore(copy.deepcopy(state))
    assert r.snapshot() == state
    assert r.explain(detail=True) == s.explain(detail=True)
    events = [{"type": "finished", "job": "a", "outcome": "completed"}, submit("d")]
    assert r.tick(1000, events) == s.tick(1000, events)
    assert r.snapshot() == s.snapshot()


def test_reconfigure(cluster):
    s = gangway.Scheduler(cluster)
    s.tick(0, [submit("a")])
    assert s.reconfigure({"nodes": [], "policy": {"priority": {"weights": {"age": 10}}}}) is None
    assert len(s.explain()["running"]) == 1


# -- every error kind -------------------------------------------------------------------------

def error_of(call):
    with pytest.raises(gangway.GangwayError) as info:
        call()
    error = info.value
    assert isinstance(error, Exception)
    # str() is the plain message alone: no tuple, no path in front, no Rust type names.
    assert error.args == (str(error),)
    assert not str(error).startswith(("(", "not a known request"))
    for rust in ("u64", "i64", "f64", "Vec", "internally tagged", "struct ", "sequence"):
        assert rust not in str(error), str(error)
    if error.path:
        assert not str(error).startswith(wire_path(error.path))
    return error


def test_invalid_config():
    e = error_of(lambda: gangway.Scheduler({"nodes": [{"name": "n1", "cpus": -1}]}))
    assert e.kind == "invalid_config" and e.message.startswith("cluster.nodes[0].cpus")
    e = error_of(lambda: gangway.Scheduler({"nodes": [], "surprise": 1}))
    assert e.kind == "invalid_config"


def test_parse_errors(cluster):
    s = gangway.Scheduler(cluster)
    assert error_of(lambda: s.tick(-1, [])).kind == "parse"
    e = error_of(lambda: s.tick(0, [object()]))
    assert (e.kind, e.path) == ("parse", ("events", 0))
    # What no JSON text holds (a set, a NaN) is refused where it is, as the shim refuses the
    # line json.dumps would write for it; nothing changes.
    before = s.snapshot()
    e = error_of(lambda: s.tick(0, {1, 2}))
    assert (e.kind, e.path) == ("parse", ("events",))
    e = error_of(lambda: s.tick(0, [{"type": "submit", "job": float("nan")}]))
    assert (e.kind, e.path) == ("parse", ("events", 0, "job"))
    assert s.snapshot() == before
    e = error_of(lambda: gangway.Scheduler(object()))
    assert (e.kind, e.path) == ("parse", ("cluster",))


def test_errors_name_their_field(cluster):
    s = gangway.Scheduler(cluster)
    e = error_of(lambda: gangway.Scheduler({"nodes": [{"name": "n1", "cpus": "many"}]}))
    assert (e.kind, e.path) == ("invalid_config", ("cluster", "nodes", 0, "cpus"))
    e = error_of(lambda: s.tick("soon", []))
    assert (e.kind, e.path) == ("parse", ("at_ms",))
    e = error_of(lambda: s.explain(detail="yes"))
    assert (e.kind, e.path) == ("parse", ("detail",))
    e = error_of(lambda: s.what_if({"id": "x", "time_limit_ms": 10, "groups": [{"count": -1}]}))
    assert (e.kind, e.path) == ("invalid", ("job", "groups", 0, "count"))
    e = error_of(lambda: s.what_if({"id": "x"}))
    assert (e.kind, e.path) == ("invalid", ("job",))
    s.tick(0, [submit("a")])
    e = error_of(lambda: s.what_if(job("a")))
    assert (e.kind, e.path) == ("duplicate_job", ())
    e = error_of(lambda: gangway.Scheduler.restore({"version": 99}))
    assert (e.kind, e.path) == ("invalid_state", ("state", "version"))
    out = s.tick(1, [{"type": "set_priority", "job": "a", "priority": "high"}, submit("a")])
    errors = [(r["index"], r["error"]["kind"], r["error"].get("path")) for r in out["rejected"]]
    assert errors == [(0, "invalid", "events[0]"), (1, "duplicate_job", None)]


def test_time_went_backwards_changes_nothing(cluster):
    s = gangway.Scheduler(cluster)
    s.tick(100, [submit("a")])
    before = s.snapshot()
    e = error_of(lambda: s.tick(50, [submit("b")]))
    assert e.kind == "time_went_backwards"
    assert error_of(lambda: s.explain(at_ms=10)).kind == "time_went_backwards"
    assert s.snapshot() == before


def test_times_beyond_the_range_are_refused_and_change_nothing(cluster):
    """Times are at most 2**53 - 1 ms (docs/protocol.md, "Conventions"): beyond, the shim's
    refusals, naming the field; `tick(2**63)` used to be accepted and every later tick refused."""
    s = gangway.Scheduler(cluster)
    s.tick(100, [submit("a")])
    before = s.snapshot()
    for at in (2**53, 2**63, 2**64 - 1):
        e = error_of(lambda: s.tick(at, []))
        assert e.kind == "parse" and e.message.startswith(f"at_ms: {at} is beyond the time range")
        assert s.snapshot() == before
    assert error_of(lambda: s.explain(at_ms=2**63)).kind == "parse"
    e = error_of(lambda: s.reconfigure({"nodes": [], "policy": {"min_job_age_ms": 2**63}}))
    assert e.kind == "invalid_config" and e.message.startswith("cluster.policy.min_job_age_ms: ")
    assert s.snapshot() == before
    out = s.tick(200, [submit("b", time_limit_ms=2**53), submit("c", begin_ms=2**63)])
    errors = [(r["index"], r["error"]["kind"]) for r in out["rejected"]]
    assert errors == [(0, "invalid"), (1, "invalid")]
    assert "time_limit_ms: 9007199254740992" in out["rejected"][0]["error"]["message"]
    assert "begin_ms: 9223372036854775808" in out["rejected"][1]["error"]["message"]
    assert s.tick(2**53 - 1, [])["ok"] is True


def test_invalid_state():
    e = error_of(lambda: gangway.Scheduler.restore({"state": 1}))
    assert e.kind == "invalid_state" and e.message.startswith("state")


def test_invalid_reconfigure_changes_nothing(cluster):
    s = gangway.Scheduler(cluster)
    s.tick(0, [submit("a")])
    before = s.snapshot()
    e = error_of(lambda: s.reconfigure({"nodes": [], "queues": [{"name": ""}]}))
    assert e.kind == "invalid_config" and "queues[0].name" in e.message
    assert s.snapshot() == before


def test_what_if_error_kinds(cluster):
    s = gangway.Scheduler(cluster)
    s.tick(0, [submit("a")])
    assert error_of(lambda: s.what_if(job("a"))).kind == "duplicate_job"
    assert error_of(lambda: s.what_if({"id": "x"})).kind == "invalid"


def test_error_is_an_exception_with_str():
    e = error_of(lambda: gangway.Scheduler({"nodes": 3}))
    assert (e.kind, e.path) == ("invalid_config", ("cluster", "nodes"))
    assert str(e) == "expected a list, got the int 3"


# -- threads ----------------------------------------------------------------------------------

def test_concurrent_calls_wait_for_each_other(cluster):
    s = gangway.Scheduler(cluster)
    errors = []
    counter = iter(range(10_000))
    lock = threading.Lock()

    def work(worker):
        try:
            for i in range(50):
                with lock:
                    at = next(counter)
                s.tick(at, [submit(f"w{worker}-{i}", time_limit_ms=5)])
                s.explain()
                s.snapshot()
        except gangway.GangwayError as e:  # a later tick may have won the race: fine
            if e.kind != "time_went_backwards":
                errors.append(e)
        except Exception as e:  # anything else (a borrow error) fails the test
            errors.append(e)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_last_timings(cluster):
    s = gangway.Scheduler(cluster)
    s.tick(0, [submit("a")])
    t = s._last_timings()
    assert set(t) == {"to_rust_ns", "handle_ns", "to_python_ns"}
    assert all(v >= 0 for v in t.values())
