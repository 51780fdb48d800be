"""Pythonic errors: TypeError and ValueError subclasses of GangwayError, `.path` as a tuple,
`str()` in plain words; `tick(strict=True)`; Plugin arguments checked when it is made."""

import math

import pytest

import gangway
from conftest import submit


def raised(call, cls):
    with pytest.raises(cls) as info:
        call()
    error = info.value
    assert isinstance(error, gangway.GangwayError)
    assert error.args == (str(error),)
    return error


def test_the_classes():
    assert issubclass(gangway.GangwayTypeError, gangway.GangwayError)
    assert issubclass(gangway.GangwayTypeError, TypeError)
    assert issubclass(gangway.GangwayValueError, gangway.GangwayError)
    assert issubclass(gangway.GangwayValueError, ValueError)
    assert gangway.GangwayTypeError.__module__ == "gangway"
    assert gangway.GangwayTypeError.__doc__ and gangway.GangwayValueError.__doc__


def test_an_ill_typed_time_is_a_type_error(cluster):
    s = gangway.Scheduler(cluster)
    e = raised(lambda: s.tick("0"), gangway.GangwayTypeError)
    assert (e.kind, e.path) == ("parse", ("at_ms",))
    assert str(e) == 'expected a non-negative integer, got the str "0"'
    assert "u64" in e.message  # the shim's own message is kept for comparing with the shim


@pytest.mark.parametrize("at", [-1, float("nan"), math.inf, 2**53])
def test_an_out_of_range_time_is_a_value_error(cluster, at):
    s = gangway.Scheduler(cluster)
    e = raised(lambda: s.tick(at), gangway.GangwayValueError)
    assert e.kind == "parse"
    assert e.path == ("at_ms",)
    assert not isinstance(e, TypeError)
    assert not str(e).startswith("at_ms")


def test_negative_time_in_plain_words(cluster):
    e = raised(lambda: gangway.Scheduler(cluster).tick(-1), ValueError)
    assert str(e) == "expected a non-negative integer, got the int -1"


def test_objects_json_cannot_hold(cluster):
    s = gangway.Scheduler(cluster)
    e = raised(lambda: s.tick(0, [object()]), gangway.GangwayTypeError)
    assert e.path == ("events", 0)
    e = raised(lambda: s.tick(0, [{1: "x"}]), gangway.GangwayTypeError)
    assert e.path == ("events", 0)
    e = raised(lambda: s.what_if({"id": "a", "time_limit_ms": float("nan")}),
               gangway.GangwayValueError)
    assert e.path == ("job", "time_limit_ms")


def test_cluster_and_job_errors(cluster):
    e = raised(lambda: gangway.Scheduler({"nodes": [{"name": "n1", "cpus": "many"}]}),
               gangway.GangwayTypeError)
    assert (e.kind, e.path) == ("invalid_config", ("cluster", "nodes", 0, "cpus"))
    e = raised(lambda: gangway.Scheduler({"nodes": [{"name": "n1", "cpus": -1}]}),
               gangway.GangwayValueError)
    assert (e.kind, e.path[:3]) == ("invalid_config", ("cluster", "nodes", 0))
    s = gangway.Scheduler(cluster)
    e = raised(lambda: s.what_if({"id": "x", "time_limit_ms": 10, "groups": [{"count": -1}]}),
               gangway.GangwayValueError)
    assert (e.kind, e.path) == ("invalid", ("job", "groups", 0, "count"))
    assert str(e) == "expected a non-negative integer, got the int -1"
    e = raised(lambda: s.what_if({"id": "x", "extra": 1}), gangway.GangwayValueError)
    assert (e.kind, e.path) == ("invalid", ("job", "extra"))
    assert str(e).startswith("unknown field 'extra', expected one of 'id', ")
    s.tick(5, [submit("a")])
    e = raised(lambda: s.what_if(submit("a")["job"]), gangway.GangwayValueError)
    assert (e.kind, e.path) == ("duplicate_job", ())
    e = raised(lambda: s.tick(1), gangway.GangwayValueError)
    assert (e.kind, e.path) == ("time_went_backwards", ("at_ms",))
    e = raised(lambda: gangway.Scheduler.restore({"version": 99}), gangway.GangwayValueError)
    assert (e.kind, e.path) == ("invalid_state", ("state", "version"))


def test_strict_tick_raises_on_a_rejected_event_and_changes_nothing(cluster):
    s = gangway.Scheduler(cluster)
    s.tick(0, [submit("a")])
    before = s.snapshot()
    e = raised(lambda: s.tick(10, [submit("b"), submit("a")], strict=True),
               gangway.GangwayValueError)
    assert (e.kind, e.path) == ("duplicate_job", ("events", 1))
    assert s.snapshot() == before
    bad = submit("c")
    bad["job"]["groups"][0]["cpus"] = "x"
    e = raised(lambda: s.tick(10, [submit("b"), bad], strict=True), gangway.GangwayTypeError)
    assert (e.kind, e.path) == ("invalid", ("events", 1, "job", "groups", 0, "cpus"))
    e = raised(lambda: s.tick(10, [None], strict=True), gangway.GangwayTypeError)
    assert (e.kind, e.path) == ("invalid", ("events", 0))
    assert str(e) == 'expected a dict with a "type", got None'
    assert s.snapshot() == before
    # Without a rejection, strict answers as the default does; the default lists rejections.
    lax = gangway.Scheduler.restore(before)
    assert s.tick(10, [submit("b")], strict=True) == lax.tick(10, [submit("b")])
    out = s.tick(20, [submit("a")])
    assert [r["error"]["kind"] for r in out["rejected"]] == ["duplicate_job"]


def test_plugin_arguments_are_checked_when_it_is_made():
    e = raised(lambda: gangway.Plugin("x", order_key=5), gangway.GangwayTypeError)
    assert (e.kind, e.path) == ("invalid_config", ("order_key",))
    assert str(e) == "order_key must be callable or None, not int"
    e = raised(lambda: gangway.Plugin("x", score_node="f"), TypeError)
    assert e.path == ("score_node",)
    e = raised(lambda: gangway.Plugin("x", veto_victim=[]), TypeError)
    assert e.path == ("veto_victim",)
    e = raised(lambda: gangway.Plugin("x", score_node=lambda j, g, n: 0.0, weight=math.nan),
               gangway.GangwayValueError)
    assert e.path == ("weight",)
    assert gangway.Plugin("x", order_key=len, veto_victim=None).hooks == ["order"]
