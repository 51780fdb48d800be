"""gangway.simulate: metrics and per-job schedules per policy."""

import importlib.util

import pytest

import gangway
from conftest import CLUSTER, REPO


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


def test_one_event_per_tick_is_off_by_default_and_runs_every_job():
    default = gangway.simulate(policies=["easy"], seed=5, jobs=30)
    batched = gangway.simulate(policies=["easy"], seed=5, jobs=30, one_event_per_tick=False)
    assert default == batched
    one_by_one = gangway.simulate(policies=["easy"], seed=5, jobs=30, one_event_per_tick=True)
    assert one_by_one["metrics"]["easy"]["jobs"]["completed"] == 30


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


# Issue 27, item 2: your own team and the sweep from Python.

def test_team_workload_with_the_team_file_fields():
    out = gangway.simulate(workload="team", policies=["ssh", "full"],
                           team={"users": 6, "nodes": 2, "gpus_per_node": 8, "weeks": 1,
                                 "load": 1.0})
    assert out["workload"] == "team (seed 1)"
    assert out["nodes"] == 2
    accounts = [a["account"] for a in out["metrics"]["full"]["accounts"]]
    assert accounts == ["u01", "u02", "u03", "u04", "u05", "u06"]
    assert out["metrics"]["ssh"]["rejections"] == []
    default = gangway.simulate(workload="team", policies=["easy"], jobs=30)
    assert default["jobs"] == 30


def test_team_workload_fits_a_given_machine():
    out = gangway.simulate(workload="team", policies=["easy"], cluster=CLUSTER,
                           team={"weeks": 1})
    assert out["metrics"]["easy"]["jobs"]["rejected"] == 0
    with pytest.raises(ValueError, match="conflict with cluster"):
        gangway.simulate(workload="team", cluster=CLUSTER, team={"nodes": 3})


def test_bad_team_arguments():
    with pytest.raises(ValueError, match="unknown field"):
        gangway.simulate(workload="team", team={"user": 6})
    with pytest.raises(ValueError, match="team= is for"):
        gangway.simulate(workload="gpu-ml", team={"users": 6}, jobs=5)
    with pytest.raises(ValueError, match="users or teams"):
        gangway.simulate(workload="team", team={"users": 2, "teams": []})


def test_sweep_returns_records_whatever_is_installed():
    table = gangway.sweep(gpus=[4, 8], users=[2], weeks=1)
    assert type(table) is gangway.SweepTable
    assert [(c["gpus"], c["users"]) for c in table] == [(4, 2), (8, 2)]
    assert {"baseline", "policy", "wait_baseline_s", "wait_policy_s", "idle_baseline_hours",
            "idle_policy_hours", "idle_saved", "pays_off"} <= set(table[0])
    assert (table[0]["baseline"], table[0]["policy"]) == ("ssh", "full")
    assert table == gangway.sweep(gpus=[4, 8], users=[2], weeks=1)
    if importlib.util.find_spec("pandas") is None:
        with pytest.raises(ImportError, match="pandas"):
            table.to_pandas()
    else:
        assert list(table.to_pandas()["gpus"]) == [4, 8]
    with pytest.raises(ValueError):
        gangway.sweep(gpus=[])


def test_sweep_compares_any_policies_with_the_first():
    table = gangway.sweep(gpus=[4], users=[8], weeks=1, policies=["fcfs", "easy", "conservative"])
    assert [(c["baseline"], c["policy"]) for c in table] == [("fcfs", "easy"),
                                                            ("fcfs", "conservative")]
    assert table[0]["wait_baseline_s"] == table[1]["wait_baseline_s"]
    alone = gangway.sweep(gpus=[4], users=[2], weeks=1, policies=["easy"])
    assert [(c["baseline"], c["policy"]) for c in alone] == [("ssh", "easy")]
    for bad in (["ssh"], ["easy", "easy"], ["nope"], []):
        with pytest.raises(ValueError):
            gangway.sweep(gpus=[4], users=[2], weeks=1, policies=bad)


# Issue 29, item 6: the reader rules of `gangway simulate` (--qos-priority,
# --non-positive-request) as keyword arguments.

ALIBABA_NODES = "sn,cpu_milli,memory_mib,gpu,model\na,32000,65536,1,T4\n"
ALIBABA_HEADER = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
                  "creation_time,deletion_time,scheduled_time\n")


def alibaba_trace(tmp_path):
    """Two pods created at once on a node of one GPU, each wanting it for 60 s: `be` (listed
    first) and `guaranteed`. Whoever ranks first runs first."""
    (tmp_path / "openb_node_list_all_node.csv").write_text(ALIBABA_NODES)
    pods = tmp_path / "openb_pod_list_test.csv"
    pods.write_text(ALIBABA_HEADER
                    + "be,1000,10,1,1000,,BE,Running,0,60,0\n"
                    + "guaranteed,1000,10,1,1000,,Guaranteed,Running,0,60,0\n")
    return str(pods)


def first_to_run(out):
    schedule = out["schedules"]["easy"]
    assert len(schedule) == 2
    return min(schedule, key=lambda r: (r["first_start_ms"], r["id"]))["id"]


def test_qos_priority_orders_alibaba_pods(tmp_path):
    trace = alibaba_trace(tmp_path)
    run = lambda **rules: first_to_run(gangway.simulate(trace=trace, policies=["easy"], **rules))
    # No mapping (the default): every pod 0, the first listed runs first.
    assert run() == "be"
    assert run(qos_priority="none") == "be"
    assert run(qos_priority=None) == "be"
    # The standard mapping: Guaranteed 3 over BE 0.
    assert run(qos_priority="default") == "guaranteed"
    # A mapping of one's own, as a dict or as the command line's string.
    assert run(qos_priority={"BE": 5}) == "be"
    assert run(qos_priority={"BE": -1}) == "guaranteed"
    assert run(qos_priority="Guaranteed=1,BE=2") == "be"
    assert run(qos_priority="BE=-1") == "guaranteed"


def test_bad_qos_priority_raises_value_error(tmp_path):
    trace = alibaba_trace(tmp_path)
    value, wrong = gangway.GangwayValueError, gangway.GangwayTypeError
    for bad, error, path, words in [
        ("LS", value, (), "no '='"), ("LS=high", value, (), "not an integer"),
        ("=3", value, (), "no class"), ("LS=1,LS=2", value, (), "named twice"),
        ({"LS": "high"}, wrong, ("LS",), 'expected an integer, got the str "high"'),
        ({"LS": 1.5}, wrong, ("LS",), "expected an integer, got the float 1.5"),
        ({"LS": True}, wrong, ("LS",), "expected an integer, got True"),
        ({"LS": 2**40}, value, ("LS",), "from -2**31 to 2**31 - 1"),
        ({"": 1}, value, (), "empty"), ({3: 1}, wrong, (), "expected a dict with str keys"),
        (["LS", 1], wrong, (), "expected \"none\", \"default\""),
    ]:
        with pytest.raises(error) as info:
            gangway.simulate(trace=trace, policies=["easy"], qos_priority=bad)
        assert info.value.path == ("qos_priority",) + path, bad
        assert words in str(info.value), (bad, str(info.value))


SWF = """; MaxProcs: 4
1 0 0 100 2 -1 -1 2 200 -1 1 1 1 -1 -1 -1 -1 -1
2 10 0 100 2 -1 -1 2 -1 -1 1 2 2 -1 -1 -1 -1 -1
"""


def test_non_positive_request_rules(tmp_path):
    trace = tmp_path / "two.swf"
    trace.write_text(SWF)
    run = lambda **rules: gangway.simulate(trace=str(trace), policies=["easy"],
                                           overrun="kill", **rules)
    # Job 2 requested -1: by default it asks for its run time and completes.
    for default in (run(), run(non_positive_request="run-time"),
                    run(non_positive_request=None)):
        assert default["jobs"] == 2
        assert [r["status"] for r in default["schedules"]["easy"]] == ["completed"] * 2
    # A limit shorter than its run time: killed at it (overrun="kill"); as an int or a string.
    for seconds in (50, "50"):
        limited = run(non_positive_request=seconds)
        status = {r["id"]: r["status"] for r in limited["schedules"]["easy"]}
        assert status == {"1": "completed", "2": "killed"}, status
    # Skipped: left out of the replay.
    skipped = run(non_positive_request="skip")
    assert skipped["jobs"] == 1
    assert [r["id"] for r in skipped["schedules"]["easy"]] == ["1"]


def test_bad_non_positive_request_raises_value_error(tmp_path):
    trace = tmp_path / "two.swf"
    trace.write_text(SWF)
    for bad in ("runtime", "0", 0, -5, "-1"):
        with pytest.raises(gangway.GangwayValueError) as info:
            gangway.simulate(trace=str(trace), policies=["easy"], non_positive_request=bad)
        assert info.value.path == ("non_positive_request",)
    for bad in (1.5, True, [60]):
        with pytest.raises(gangway.GangwayTypeError) as info:
            gangway.simulate(trace=str(trace), policies=["easy"], non_positive_request=bad)
        assert info.value.path == ("non_positive_request",)


def test_reader_rules_need_a_trace():
    with pytest.raises(gangway.GangwayValueError, match="is for trace=") as info:
        gangway.simulate(jobs=5, qos_priority="default")
    assert info.value.path == ("qos_priority",)
    with pytest.raises(gangway.GangwayValueError, match="is for trace=") as info:
        gangway.simulate(jobs=5, non_positive_request="skip")
    assert info.value.path == ("non_positive_request",)
