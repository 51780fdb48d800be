"""Sweeps on an executor (issue 30, item 5): one cell per task, the records merged in grid
order and equal to the in-process sweep's, whatever runs the cells; and the job-array
entry point, gangway.cells."""

import concurrent.futures
import json
import multiprocessing
import random
import subprocess
import sys

import pytest

import gangway
from gangway import cells
from conftest import REPO

GRID = {"gpus": [4, 8], "users": [2, 3], "seed": 5, "weeks": 1}
TRACE = REPO / "gangway-sim" / "tests" / "fixtures" / "KTH-SP2-1996-2.1-cln-first200.swf"
TRACES = {"traces": [str(TRACE), "gpu-ml"], "policies": ["fcfs", "easy"], "seeds": [1, 2],
          "jobs": 500, "faults": True}


@pytest.fixture(scope="module")
def in_process():
    return gangway.sweep(**GRID)


@pytest.fixture(scope="module")
def traces_in_process():
    return gangway.sweep_traces(**TRACES)


class _Deferred:
    """A future of `_Reversed`: its call runs when any result is first asked for."""

    def __init__(self, executor, fn, args):
        self.executor, self.fn, self.args, self.value = executor, fn, args, None

    def result(self):
        self.executor.run_all()
        return self.value


class _Reversed:
    """A duck-typed executor (submit only) that records its tasks and runs them last first."""

    def __init__(self):
        self.submitted = []

    def submit(self, fn, *args):
        future = _Deferred(self, fn, args)
        self.submitted.append(future)
        return future

    def run_all(self):
        for future in reversed(self.submitted):
            if future.value is None:
                future.value = future.fn(*future.args)


def test_sweep_on_a_thread_pool_equals_the_in_process_sweep(in_process):
    assert [(c["gpus"], c["users"]) for c in in_process] == [(4, 2), (8, 2), (4, 3), (8, 3)]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        table = gangway.sweep(**GRID, executor=pool)
    assert type(table) is gangway.SweepTable
    assert table == in_process


def test_sweep_on_a_process_pool_equals_the_in_process_sweep(in_process):
    # spawn: each worker imports gangway afresh and gets the cell by pickle.
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as pool:
        assert gangway.sweep(**GRID, executor=pool) == in_process


def test_sweep_submits_one_task_per_cell_and_merges_in_grid_order(in_process):
    executor = _Reversed()
    table = gangway.sweep(**GRID, policies=["ssh", "full"], executor=executor)
    assert len(executor.submitted) == 4
    assert table == in_process
    # Two compared policies: one task per cell still, two records each, in the order given.
    executor = _Reversed()
    table = gangway.sweep(**GRID, policies=["fcfs", "easy", "sjf"], executor=executor)
    assert len(executor.submitted) == 4
    assert table == gangway.sweep(**GRID, policies=["fcfs", "easy", "sjf"])
    assert [(c["gpus"], c["users"], c["policy"]) for c in table[:4]] == [
        (4, 2, "easy"), (4, 2, "sjf"), (8, 2, "easy"), (8, 2, "sjf")]


def test_bad_executors_and_arguments_are_refused_before_any_task():
    with pytest.raises(gangway.GangwayTypeError, match="^expected None, 'ray', ") as info:
        gangway.sweep(**GRID, executor=5)
    assert info.value.path == ("executor",)
    with pytest.raises(gangway.GangwayValueError, match="unknown engine 'dask'") as info:
        gangway.sweep(**GRID, executor="dask")
    assert info.value.path == ("executor",)
    executor = _Reversed()
    with pytest.raises(ValueError):
        gangway.sweep(**GRID, policies=["ssh", "nope"], executor=executor)
    with pytest.raises(ValueError):
        gangway.sweep(gpus=[], executor=executor)
    assert executor.submitted == []

    class NoFutures:
        def submit(self, fn, *args):
            return 42

    with pytest.raises(TypeError, match="not a future"):
        gangway.sweep(**GRID, executor=NoFutures())


def test_a_failing_cell_raises_and_cancels_the_rest():
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        with pytest.raises(gangway.GangwayError) as error:
            # More nodes than a workload may have: every cell's workload is refused.
            gangway.sweep(gpus=[2**32 - 1], users=[2, 3], executor=pool)
    assert error.value.kind == "simulation"
    # A failed simulation is neither a TypeError nor a ValueError: a plain GangwayError.
    assert type(error.value) is gangway.GangwayError
    assert error.value.path == ()


def test_sweep_traces_is_the_same_on_every_executor(traces_in_process):
    table = traces_in_process
    assert [(r["trace"], r["seed"], r["policy"]) for r in table] == [
        (trace, seed, policy) for trace in TRACES["traces"] for seed in (1, 2)
        for policy in ("fcfs", "easy")]
    # A trace file is replayed whole; gpu-ml draws `jobs` jobs.
    assert [r["jobs"] for r in table] == [200] * 4 + [500] * 4
    direct = gangway.simulate(trace=str(TRACE), policies=["easy"], faults=2)
    assert table[3]["metrics"] == direct["metrics"]["easy"]
    assert table[3]["wait_mean_s"] == direct["metrics"]["easy"]["wait"]["mean_s"]
    # The seed draws the faults of a trace's replay, and gpu-ml's jobs too.
    assert table[1]["metrics"] != table[3]["metrics"]
    assert table[4]["metrics"] != table[6]["metrics"]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        assert gangway.sweep_traces(**TRACES, executor=pool) == table
    executor = _Reversed()
    assert gangway.sweep_traces(**TRACES, executor=executor) == table
    assert len(executor.submitted) == 8


def test_sweep_traces_refuses_bad_arguments():
    executor = _Reversed()
    for bad, error in (
        ({"traces": str(TRACE)}, TypeError),
        ({"traces": []}, ValueError),
        ({"traces": [3]}, TypeError),
        ({"traces": ["no-such-trace.swf"]}, ValueError),
        ({"traces": ["gpu-ml"], "policies": ["nope"]}, ValueError),
        ({"traces": ["gpu-ml"], "policies": "easy"}, TypeError),
        ({"traces": ["gpu-ml"], "seeds": [-1]}, ValueError),
        ({"traces": ["gpu-ml"], "seeds": [1.5]}, TypeError),
        ({"traces": ["gpu-ml"], "jobs": -1}, ValueError),
        ({"traces": ["gpu-ml"], "executor": object()}, TypeError),
    ):
        with pytest.raises(error):
            gangway.sweep_traces(**{"executor": executor, **bad})
    assert executor.submitted == []


def test_cells_merged_in_any_order_are_the_sweep(in_process):
    documents = [cells.run(index, **GRID) for index in range(cells.count(**GRID))]
    assert [d["cells"] for d in documents] == [4] * 4
    shuffled = documents[:]
    random.Random(3).shuffle(shuffled)
    # Through JSON, as the files of a job array.
    merged = cells.merge(json.loads(json.dumps(d)) for d in shuffled)
    assert type(merged) is gangway.SweepTable
    assert merged == in_process
    with pytest.raises(ValueError, match="missing \\[2\\]"):
        cells.merge(documents[:2] + documents[3:])
    with pytest.raises(ValueError, match="twice"):
        cells.merge(documents + documents[:1])
    other = cells.run(0, **{**GRID, "seed": 6})
    with pytest.raises(ValueError, match="another sweep"):
        cells.merge(documents[1:] + [other])
    with pytest.raises(ValueError, match="no cell documents"):
        cells.merge([])
    with pytest.raises(IndexError):
        cells.run(4, **GRID)
    with pytest.raises(IndexError):
        cells.run(-1, **GRID)


def test_the_job_array_command_line(tmp_path, in_process):
    grid = ["--gpus", "4,8", "--users", "2,3", "--seed", "5", "--weeks", "1"]
    command = [sys.executable, "-m", "gangway.cells"]
    count = subprocess.run(command + ["count"] + grid, capture_output=True, text=True,
                           check=True)
    assert count.stdout == "4\n"
    for index in range(4):
        subprocess.run(command + ["run", str(index)] + grid
                       + ["--out", str(tmp_path / f"cell-{index}.json")], check=True)
    files = sorted(str(p) for p in tmp_path.glob("cell-*.json"))
    subprocess.run(command + ["merge"] + files + ["--out", str(tmp_path / "sweep.json")],
                   check=True)
    assert json.loads((tmp_path / "sweep.json").read_text()) == list(in_process)
    missing = subprocess.run(command + ["merge"] + files[1:], capture_output=True, text=True)
    assert missing.returncode == 2 and "missing [0]" in missing.stderr
    beyond = subprocess.run(command + ["run", "4"] + grid, capture_output=True, text=True)
    assert beyond.returncode == 2 and "no cell 4" in beyond.stderr


def test_trace_sweep_cells_merged_are_sweep_traces(traces_in_process):
    arguments = {key: value for key, value in TRACES.items()}
    assert cells.count("sweep_traces", **arguments) == 8
    documents = [cells.run(index, "sweep_traces", **arguments) for index in range(8)]
    random.Random(4).shuffle(documents)
    merged = cells.merge(json.loads(json.dumps(d)) for d in documents)
    assert merged == traces_in_process
    # A trace sweep's cells are not a team sweep's.
    with pytest.raises(ValueError, match="another sweep"):
        cells.merge(documents[1:] + [cells.run(0, **GRID)])
    with pytest.raises(TypeError, match="no argument gpus"):
        cells.count("sweep_traces", traces=["gpu-ml"], gpus=[4])
    with pytest.raises(TypeError, match="no argument traces"):
        cells.count("sweep", traces=["gpu-ml"])
    with pytest.raises(ValueError, match="unknown kind"):
        cells.count("sweeps", **GRID)


def test_the_job_array_command_line_for_traces(tmp_path, traces_in_process):
    options = ["--traces", f"{TRACE},gpu-ml", "--policies", "fcfs,easy", "--seeds", "1,2",
               "--jobs", "500", "--faults"]
    command = [sys.executable, "-m", "gangway.cells"]
    count = subprocess.run(command + ["count"] + options, capture_output=True, text=True,
                           check=True)
    assert count.stdout == "8\n"
    for index in range(8):
        subprocess.run(command + ["run", str(index)] + options
                       + ["--out", str(tmp_path / f"cell-{index}.json")], check=True)
    merged = subprocess.run(command + ["merge"] + [str(p) for p in tmp_path.glob("*.json")],
                            capture_output=True, text=True, check=True)
    assert json.loads(merged.stdout) == list(traces_in_process)
    mixed = subprocess.run(command + ["count", "--gpus", "4"] + options, capture_output=True,
                           text=True)
    assert mixed.returncode == 2 and "--gpus is not for --traces" in mixed.stderr
    stray = subprocess.run(command + ["count", "--seeds", "1"], capture_output=True, text=True)
    assert stray.returncode == 2 and "--seeds is for --traces" in stray.stderr
    # A refused argument names itself, as its exception's .message does.
    bad = subprocess.run(command + ["count", "--gpus", "8,-1"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert bad.stderr.endswith("error: gpus[1]: expected a positive integer, got the int -1\n")
