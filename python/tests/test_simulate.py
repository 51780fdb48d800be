"""gangway.simulate: metrics and per-job schedules per policy."""

import importlib.util

import pytest

import gangway
from conftest import REPO


def test_builtin_workload_two_policies():
    out = gangway.simulate(workload="gpu-ml", policies=["fcfs", "easy"], seed=3, jobs=40)
    assert out["policies"] == ["fcfs", "easy"]
    assert out["jobs"] == 40 and out["workload"] == "gpu-ml (seed 3)"
    for policy in ("fcfs", "easy"):
        metrics = out["metrics"][policy]
        assert metrics["jobs"]["completed"] == 40
        assert 0 < metrics["utilization"] <= 1
        schedule = out["schedules"][policy]
        assert len(schedule) == 40
        record = schedule[0]
        assert {"id", "account", "submit_ms", "first_start_ms", "end_ms", "status"} <= set(record)


def test_deterministic():
    a = gangway.simulate(policies=["easy"], seed=5, jobs=30)
    b = gangway.simulate(policies=["easy"], seed=5, jobs=30)
    assert a == b


def test_trace_and_cluster_override():
    traces = sorted((REPO / "gangway-sim" / "tests" / "fixtures").rglob("*.swf"))
    if not traces:
        pytest.skip("no SWF fixture")
    out = gangway.simulate(trace=str(traces[0]), policies=["easy"])
    assert out["workload"] == traces[0].name
    assert out["metrics"]["easy"]["jobs"]["submitted"] == out["jobs"]


def test_cluster_override():
    cluster = {"nodes": [{"name": f"n{i}", "cpus": 64, "memory_mib": 512000,
                          "gpus": {"model": "a100", "count": 8}} for i in range(80)]}
    out = gangway.simulate(policies=["fcfs"], jobs=20, cluster=cluster)
    assert out["nodes"] == 80


def test_bad_arguments():
    with pytest.raises(ValueError):
        gangway.simulate(policies=["nope"], jobs=5)
    with pytest.raises(ValueError):
        gangway.simulate(workload="gpu-ml", trace="x.swf")
    with pytest.raises(ValueError):
        gangway.simulate(trace="jobs.txt")
    with pytest.raises(ValueError):
        gangway.simulate(jobs=5, overrun="maybe")
    with pytest.raises(gangway.GangwayError) as info:
        gangway.simulate(jobs=5, cluster={"nodes": 1})
    assert info.value.kind == "invalid_config"


def test_dataframe_when_pandas_is_present():
    if importlib.util.find_spec("pandas") is None:
        with pytest.raises(ImportError):
            gangway.simulate(policies=["easy"], jobs=5, dataframe=True)
        return
    out = gangway.simulate(policies=["easy"], jobs=5, dataframe=True)
    assert len(out["schedules"]["easy"]) == 5
