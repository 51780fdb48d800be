"""Sweeps on Ray (issue 30, item 5): a local Ray cluster of 2 cpus on loopback, started once
for the module, runs a sweep's cells as tasks, and the records equal the in-process sweep's.
Skipped when ray is not installed, failed instead with GANGWAY_REQUIRE_RAY=1 (CI sets it)."""

import os

import pytest

import gangway
from conftest import REPO

try:
    import ray
except ImportError:
    if os.environ.get("GANGWAY_REQUIRE_RAY") == "1":
        raise
    pytest.skip("ray is not installed (pip install ray)", allow_module_level=True)

TRACE = REPO / "gangway-sim" / "tests" / "fixtures" / "KTH-SP2-1996-2.1-cln-first200.swf"


@pytest.fixture(scope="module", autouse=True)
def cluster():
    # A cluster of its own ("local"), never one already running here.
    ray.init(address="local", num_cpus=2, include_dashboard=False,
             _node_ip_address="127.0.0.1", log_to_driver=False)
    yield
    ray.shutdown()


class Counting(gangway.RayExecutor):
    """A RayExecutor that counts its tasks."""

    made = []

    def __init__(self, **options):
        super().__init__(**options)
        self.tasks = 0
        Counting.made.append(self)

    def submit(self, fn, /, *args, **kwargs):
        self.tasks += 1
        return super().submit(fn, *args, **kwargs)


def test_a_ray_executor_runs_calls_in_ray_workers():
    future = gangway.RayExecutor().submit(os.getpid)
    assert future.result(timeout=60) != os.getpid()


def test_sweep_on_ray_equals_the_in_process_sweep(monkeypatch):
    grid = {"gpus": [4, 8], "users": [2, 3], "seed": 5, "weeks": 1,
            "policies": ["ssh", "easy", "full"]}
    # executor="ray" makes a RayExecutor for the call: one task per cell of the grid.
    monkeypatch.setattr(gangway._sweeps, "RayExecutor", Counting)
    table = gangway.sweep(**grid, executor="ray")
    assert [executor.tasks for executor in Counting.made] == [4]
    assert type(table) is gangway.SweepTable and len(table) == 8
    assert table == gangway.sweep(**grid)


def test_sweep_traces_on_ray_equals_the_in_process_one():
    grid = {"traces": [str(TRACE), "gpu-ml"], "policies": ["fcfs", "easy"], "seeds": [1, 2],
            "jobs": 500, "faults": True}
    table = gangway.sweep_traces(**grid, executor=gangway.RayExecutor(num_cpus=1))
    assert len(table) == 8
    assert table == gangway.sweep_traces(**grid)


def test_a_shut_down_ray_executor_refuses_tasks():
    executor = gangway.RayExecutor()
    executor.shutdown()
    with pytest.raises(RuntimeError, match="after shutdown"):
        gangway.sweep(gpus=[4], users=[2], weeks=1, executor=executor)
