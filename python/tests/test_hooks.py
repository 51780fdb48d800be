"""Python plug-ins: order keys, node scorers, victim vetoes, and a hook that raises."""

import math

import gangway
from conftest import job, submit

ONE_NODE = {"nodes": [{"name": "n1", "cpus": 8, "gpus": {"model": "a100", "count": 1}}]}


def test_order_key_decides_who_starts_first():
    # Shortest time limit first, in Python.
    shortest = gangway.Plugin("shortest", order_key=lambda j: -j["time_limit_ms"])
    assert shortest.hooks == ["order"]
    both = gangway.Plugin("both", veto_victim=lambda p, v: None, order_key=lambda j: 0)
    assert both.hooks == ["order", "victim_veto"]
    s = gangway.Scheduler(ONE_NODE, plugins=[shortest])
    out = s.tick(0, [submit("long", time_limit_ms=50_000), submit("short", time_limit_ms=10)])
    assert [d["job"] for d in out["decisions"]] == ["short"]
    assert "plugin_faults" not in out
    assert s.plugins[0].name == "shortest"


def test_order_key_sees_the_job_dict():
    seen = []

    def key(j):
        seen.append(j)
        return 0

    s = gangway.Scheduler(ONE_NODE, plugins=[gangway.Plugin("spy", order_key=key)])
    s.tick(7, [submit("a", account=None)])
    assert seen and seen[0]["id"] == "a" and seen[0]["submit_ms"] == 7


def test_score_node_places_the_job():
    cluster = {"nodes": [{"name": f"n{i}", "cpus": 8, "labels": {"rack": str(i)}} for i in (1, 2, 3)]}
    prefer_n3 = gangway.Plugin(
        "prefer_n3", score_node=lambda j, group, node: 10.0 if node["name"] == "n3" else 0.0)
    s = gangway.Scheduler(cluster, plugins=[prefer_n3])
    out = s.tick(0, [{"type": "submit", "job": {"id": "a", "time_limit_ms": 10,
                                                "groups": [{"count": 1, "cpus": 1}]}}])
    assert out["decisions"][0]["placement"][0]["node"] == "n3"


PREEMPTING = {
    "nodes": [{"name": "n1", "cpus": 100}],
    "queues": [{"name": "cq", "quota": {"cpu": {"nominal": 2}},
                "preemption": {"within_queue": "lower_priority"}}],
    "policy": {"preemption": {"enabled": True}},
}


def queued(job_id, priority, preemptible=False):
    return {"type": "submit", "job": {
        "id": job_id, "priority": priority, "queue": "cq", "time_limit_ms": 3_600_000,
        "preemptible": preemptible, "groups": [{"count": 1, "cpus": 2}]}}


def preempts(plugins):
    s = gangway.Scheduler(PREEMPTING, plugins=plugins)
    s.tick(0, [queued("keep", -1, preemptible=True)])
    out = s.tick(1000, [queued("urgent", 1)])
    return [d["job"] for d in out["decisions"] if d["type"] == "preempt"]


def test_victim_veto_protects_a_job():
    assert preempts([]) == ["keep"]
    protect = gangway.Plugin(
        "protect", veto_victim=lambda p, v: "protected" if v["id"] == "keep" else None)
    assert protect.hooks == ["victim_veto"]
    assert preempts([protect]) == []


def test_a_veto_with_an_end_gets_the_preemptor_retried_then():
    clock = {"now": 0}

    def young(p, v):
        return ("young", 60_000) if clock["now"] < 60_000 else None

    s = gangway.Scheduler(PREEMPTING, plugins=[gangway.Plugin("young", veto_victim=young)])
    s.tick(0, [queued("keep", -1, preemptible=True)])
    clock["now"] = 1000
    out = s.tick(1000, [queued("urgent", 1)])
    assert [d for d in out["decisions"] if d["type"] == "preempt"] == []
    assert out["next_wakeup_ms"] == 60_000
    clock["now"] = 60_000
    out = s.tick(60_000)
    assert [d["job"] for d in out["decisions"] if d["type"] == "preempt"] == ["keep"]


def test_a_veto_with_a_negative_end_is_a_fault():
    s = gangway.Scheduler(PREEMPTING, plugins=[
        gangway.Plugin("bad", veto_victim=lambda p, v: ("young", -1))])
    s.tick(0, [queued("keep", -1, preemptible=True)])
    out = s.tick(1000, [queued("urgent", 1)])
    assert out["plugin_faults"][0]["plugin"] == "bad"
    assert out["plugin_faults"][0]["hook"] == "victim_veto"


def test_a_raising_hook_is_a_misbehaving_plugin(capfd):
    def broken(j):
        raise ValueError("no key for " + j["id"])

    s = gangway.Scheduler(ONE_NODE, plugins=[gangway.Plugin("broken", order_key=broken)])
    out = s.tick(0, [submit("a"), submit("b")])
    assert out["ok"] is True
    faults = out["plugin_faults"]
    assert faults[0]["plugin"] == "broken" and faults[0]["hook"] == "order"
    assert faults[0]["kind"] == "panic"
    message = faults[0]["message"]
    # The Python traceback, as Python prints it: where it raised, and what.
    assert message.startswith("Python order_key raised Traceback (most recent call last):")
    assert 'raise ValueError("no key for " + j["id"])' in message and ", in broken" in message
    assert message.endswith("ValueError: no key for a")
    # Nothing was printed: no panic message, no backtrace, no traceback.
    printed = capfd.readouterr()
    assert printed.err == "" and printed.out == ""
    # The tick completed: one job runs, the other waits with a reason.
    assert [d["job"] for d in out["decisions"]] == ["a"]
    pending = s.explain()["pending"]
    assert [(p["job"], p["reason"]) for p in pending] == [("b", "reserved")] or \
        pending[0]["reason"]


def test_a_hook_answering_the_wrong_type_is_a_fault(capfd):
    s = gangway.Scheduler(ONE_NODE, plugins=[gangway.Plugin("typo", order_key=lambda j: "x")])
    out = s.tick(0, [submit("a")])
    assert out["plugin_faults"][0]["plugin"] == "typo"
    assert "TypeError" in out["plugin_faults"][0]["message"]
    assert capfd.readouterr().err == ""
    assert [d["job"] for d in out["decisions"]] == ["a"]


def test_a_non_finite_score_is_reported_and_ranks_the_node_worst(capfd):
    # A scorer that means "n2 is best" with inf: the engine takes a non-finite score as the
    # worst, so the job lands on n1, and says so in plugin_faults (issue 30: a user who meant
    # "best" finds out).
    two = {"nodes": [{"name": "n1", "cpus": 8}, {"name": "n2", "cpus": 8}]}
    a = {"type": "submit", "job": {"id": "a", "time_limit_ms": 10,
                                   "groups": [{"count": 1, "cpus": 1}]}}

    def scorer(score):
        return gangway.Plugin(
            "wants_n2", score_node=lambda j, group, node: score if node["name"] == "n2" else 0.0)

    # A finite score that means best: n2, and no fault.
    out = gangway.Scheduler(two, plugins=[scorer(5.0)]).tick(0, [a])
    assert out["decisions"][0]["placement"][0]["node"] == "n2"
    assert "plugin_faults" not in out
    for bad in (math.inf, -math.inf, math.nan):
        out = gangway.Scheduler(two, plugins=[scorer(bad)]).tick(0, [a])
        assert out["ok"] is True
        assert [d["placement"][0]["node"] for d in out["decisions"]] == ["n1"], bad
        faults = out["plugin_faults"]
        assert [(f["plugin"], f["hook"], f["kind"]) for f in faults] == \
            [("wants_n2", "node_score", "non_finite")], (bad, faults)
    assert capfd.readouterr().err == ""


def test_restore_takes_the_hooks_again():
    shortest = gangway.Plugin("shortest", order_key=lambda j: -j["time_limit_ms"])
    s = gangway.Scheduler(ONE_NODE, plugins=[shortest])
    s.tick(0, [submit("a", time_limit_ms=100)])
    s.tick(1, [submit("long", time_limit_ms=50_000), submit("short", time_limit_ms=1_000)])
    r = gangway.Scheduler.restore(s.snapshot(), plugins=[shortest])
    done = [{"type": "finished", "job": "a", "outcome": "completed"}]
    assert r.tick(100, done) == s.tick(100, done)
    assert [d["job"] for d in r.tick(101)["decisions"]] == []


def test_duplicate_plugin_names_are_an_invalid_config():
    p = gangway.Plugin("same", order_key=lambda j: 0)
    try:
        gangway.Scheduler(ONE_NODE, plugins=[p, p])
    except gangway.GangwayError as e:
        assert e.kind == "invalid_config"
    else:
        raise AssertionError("expected GangwayError")
