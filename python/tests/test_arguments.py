"""Every public function's and constructor's arguments: an ill-typed one raises
GangwayTypeError, an invalid value GangwayValueError, each with the argument's `.path` and a
plain message in Python's words (never PyO3's or Rust's), and nothing changes."""

import math

import pytest

import gangway
from conftest import CLUSTER, submit

# Words of Rust, serde or PyO3 that a Python user should never read.
RUST_WORDS = ("Vec", "extract", "u64", "u32", "usize", "i64", "`", "struct ", "os error",
              "instance of", "cannot be interpreted", "real number", "unsigned", "convert")


def refused(call, cls, path, kind="invalid_argument"):
    with pytest.raises(cls) as info:
        call()
    error = info.value
    assert isinstance(error, gangway.GangwayError)
    assert (error.kind, error.path) == (kind, path)
    assert error.args == (str(error),)
    assert not any(word in str(error) for word in RUST_WORDS), str(error)
    return error


S = gangway.simulate
TYPE, VALUE = gangway.GangwayTypeError, gangway.GangwayValueError

SIMULATE = [
    # (arguments, exception, path)
    ({"policies": "easy"}, TYPE, ("policies",)),
    ({"policies": [1]}, TYPE, ("policies", 0)),
    ({"policies": ["easy", None]}, TYPE, ("policies", 1)),
    ({"policies": ["nope"]}, VALUE, ("policies", 0)),
    ({"policies": ["easy", "easy"]}, VALUE, ("policies", 1)),
    ({"policies": []}, VALUE, ("policies",)),
    ({"workload": 1}, TYPE, ("workload",)),
    ({"workload": "x"}, VALUE, ("workload",)),
    ({"trace": 1}, TYPE, ("trace",)),
    ({"trace": "no-such-trace.swf"}, VALUE, ("trace",)),
    ({"trace": "no-such-trace.swf", "workload": "gpu-ml"}, VALUE, ("trace",)),
    ({"seed": -1}, VALUE, ("seed",)),
    ({"seed": 2**64}, VALUE, ("seed",)),
    ({"seed": "1"}, TYPE, ("seed",)),
    ({"seed": 1.5}, TYPE, ("seed",)),
    ({"seed": math.nan}, TYPE, ("seed",)),
    ({"seed": True}, TYPE, ("seed",)),
    ({"jobs": -1}, VALUE, ("jobs",)),
    ({"jobs": "1"}, TYPE, ("jobs",)),
    ({"overrun": 1}, TYPE, ("overrun",)),
    ({"overrun": "x"}, VALUE, ("overrun",)),
    ({"checkpoint_delay_s": -1}, VALUE, ("checkpoint_delay_s",)),
    ({"checkpoint_delay_s": math.inf}, TYPE, ("checkpoint_delay_s",)),
    ({"faults": -1}, VALUE, ("faults",)),
    ({"dataframe": 1}, TYPE, ("dataframe",)),
    ({"one_event_per_tick": "x"}, TYPE, ("one_event_per_tick",)),
    ({"workload": "team", "team": 1}, TYPE, ("team",)),
    ({"workload": "team", "team": {"users": "x"}}, TYPE, ("team", "users")),
    ({"workload": "team", "team": {"x": 1}}, VALUE, ("team", "x")),
    ({"team": {}}, VALUE, ("team",)),
    ({"qos_priority": "default"}, VALUE, ("qos_priority",)),
    ({"trace": "t.swf", "qos_priority": 1.5}, TYPE, ("qos_priority",)),
    ({"trace": "t.swf", "qos_priority": {"LS": True}}, TYPE, ("qos_priority", "LS")),
    ({"trace": "t.swf", "qos_priority": {"LS": 2**40}}, VALUE, ("qos_priority", "LS")),
    ({"trace": "t.swf", "non_positive_request": -1}, VALUE, ("non_positive_request",)),
    ({"trace": "t.swf", "non_positive_request": 1.5}, TYPE, ("non_positive_request",)),
    ({"trace": "t.swf", "non_positive_request": "x"}, VALUE, ("non_positive_request",)),
]


@pytest.mark.parametrize("arguments,cls,path", SIMULATE)
def test_simulate_arguments(arguments, cls, path):
    refused(lambda: S(jobs=10, **arguments) if "jobs" not in arguments else S(**arguments),
            cls, path)


def test_plain_messages():
    e = refused(lambda: S(policies="easy"), TYPE, ("policies",))
    assert str(e) == 'expected a list of str, got the str "easy"'
    assert e.message == 'policies: expected a list of str, got the str "easy"'
    e = refused(lambda: S(seed=-1), VALUE, ("seed",))
    assert str(e) == "expected a non-negative integer, got the int -1"
    e = refused(lambda: S(seed=2**64), VALUE, ("seed",))
    assert str(e) == f"expected an integer from 0 to {2**64 - 1}, got the int {2**64}"
    e = refused(lambda: S(seed=math.nan), TYPE, ("seed",))
    assert str(e) == "expected a non-negative integer, got the float nan"
    e = refused(lambda: S(dataframe=None), TYPE, ("dataframe",))
    assert str(e) == "expected a bool, got None"
    e = refused(lambda: S(policies=["nope"]), VALUE, ("policies", 0))
    assert str(e).startswith("unknown policy 'nope': expected one of ssh, fcfs, ")
    e = refused(lambda: S(trace=1), TYPE, ("trace",))
    assert str(e) == "expected a str or an os.PathLike, got the int 1"


SWEEP = [
    ({"gpus": "8"}, TYPE, ("gpus",)),
    ({"gpus": [-1]}, VALUE, ("gpus", 0)),
    ({"gpus": [8, 0]}, VALUE, ("gpus", 1)),
    ({"gpus": [None]}, TYPE, ("gpus", 0)),
    ({"gpus": [2**32]}, VALUE, ("gpus", 0)),
    ({"gpus": []}, VALUE, ("gpus",)),
    ({"users": [1.0]}, TYPE, ("users", 0)),
    ({"seed": -1}, VALUE, ("seed",)),
    ({"weeks": -1}, VALUE, ("weeks",)),
    ({"weeks": 0}, VALUE, ("weeks",)),
    ({"weeks": None}, TYPE, ("weeks",)),
    ({"policies": "easy"}, TYPE, ("policies",)),
    ({"policies": ["x"]}, VALUE, ("policies", 0)),
    ({"policies": ["easy", "easy"]}, VALUE, ("policies", 1)),
    ({"executor": 1}, TYPE, ("executor",)),
    ({"executor": "x"}, VALUE, ("executor",)),
]


@pytest.mark.parametrize("arguments,cls,path", SWEEP)
def test_sweep_arguments(arguments, cls, path):
    refused(lambda: gangway.sweep(**arguments), cls, path)


@pytest.mark.parametrize("arguments,cls,path", [
    ({"traces": "gpu-ml"}, TYPE, ("traces",)),
    ({"traces": []}, VALUE, ("traces",)),
    ({"traces": [1]}, TYPE, ("traces", 0)),
    ({"traces": ["no-such-trace.swf"]}, VALUE, ("traces", 0)),
    ({"traces": ["gpu-ml"], "seeds": [1, -1]}, VALUE, ("seeds", 1)),
    ({"traces": ["gpu-ml"], "seeds": ["1"]}, TYPE, ("seeds", 0)),
    ({"traces": ["gpu-ml"], "seeds": [2**64]}, VALUE, ("seeds", 0)),
    ({"traces": ["gpu-ml"], "seeds": [True]}, TYPE, ("seeds", 0)),
    ({"traces": ["gpu-ml"], "jobs": -1}, VALUE, ("jobs",)),
    ({"traces": ["gpu-ml"], "jobs": "1"}, TYPE, ("jobs",)),
    ({"traces": ["gpu-ml"], "policies": ["x"]}, VALUE, ("policies", 0)),
    ({"traces": ["gpu-ml"], "faults": "yes"}, TYPE, ("faults",)),
    ({"traces": ["gpu-ml"], "executor": 1}, TYPE, ("executor",)),
])
def test_sweep_traces_arguments(arguments, cls, path):
    refused(lambda: gangway.sweep_traces(**arguments), cls, path)


@pytest.mark.parametrize("arguments,cls,path", [
    ({"tier": -1}, VALUE, ("tier",)),
    ({"tier": 2**70}, VALUE, ("tier",)),
    ({"tier": "1"}, TYPE, ("tier",)),
    ({"tier": 1.5}, TYPE, ("tier",)),
    ({"tier": None}, TYPE, ("tier",)),
    ({"weight": "1"}, TYPE, ("weight",)),
    ({"weight": None}, TYPE, ("weight",)),
    ({"partition": 1}, TYPE, ("partition",)),
])
def test_plugin_arguments(arguments, cls, path):
    refused(lambda: gangway.Plugin("x", **arguments), cls, path, kind="invalid_config")


def test_the_sweeps_python_checks_say_what_the_native_ones_say():
    e = refused(lambda: gangway.sweep_traces(["gpu-ml"], seeds=[-1]), VALUE, ("seeds", 0))
    assert str(e) == "expected a non-negative integer, got the int -1"
    e = refused(lambda: gangway.sweep_traces(["gpu-ml"], jobs=1.5), TYPE, ("jobs",))
    assert str(e) == "expected a non-negative integer, got the float 1.5"


def test_plugin_name_and_tier_words():
    refused(lambda: gangway.Plugin(None), TYPE, ("name",), kind="invalid_config")
    refused(lambda: gangway.Plugin(1), TYPE, ("name",), kind="invalid_config")
    e = refused(lambda: gangway.Plugin("x", tier=-1), VALUE, ("tier",), kind="invalid_config")
    assert str(e) == "expected a non-negative integer, got the int -1"
    e = refused(lambda: gangway.Plugin("x", tier=2**70), VALUE, ("tier",), kind="invalid_config")
    assert str(e) == f"expected an integer from 0 to {2**64 - 1}, got the int {2**70}"
    assert gangway.Plugin("x", tier=2, weight=2).tier == 2
    assert gangway.Plugin("x", weight=2).weight == 2.0


@pytest.mark.parametrize("plugins,path", [(1, ("plugins",)), ("x", ("plugins",)),
                                          ([1], ("plugins", 0))])
def test_scheduler_plugins(plugins, path):
    refused(lambda: gangway.Scheduler(CLUSTER, plugins=plugins), TYPE, path)
    state = gangway.Scheduler(CLUSTER).snapshot()
    refused(lambda: gangway.Scheduler.restore(state, plugins=plugins), TYPE, path)


@pytest.mark.parametrize("strict", [None, 1, "yes"])
def test_strict_must_be_a_bool_and_the_tick_changes_nothing(strict):
    s = gangway.Scheduler(CLUSTER)
    s.tick(0, [submit("a")])
    before = s.snapshot()
    refused(lambda: s.tick(10, [submit("b")], strict=strict), TYPE, ("strict",))
    assert s.snapshot() == before


def test_defaults_still_work():
    out = S(workload="gpu-ml", jobs=20, policies=("fcfs", "easy"), seed=3,
            checkpoint_delay_s=0, faults=0, overrun="kill", one_event_per_tick=True)
    assert out["policies"] == ["fcfs", "easy"] and out["jobs"] == 20
    assert gangway.Scheduler(CLUSTER, plugins=(gangway.Plugin("p", order_key=len),)).plugins
