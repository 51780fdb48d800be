"""Sweeps: many independent simulations, in this process or on an executor (docs/python.md,
"Sweeps on an executor").

One cell of a sweep is one task: :func:`sweep` runs a cell of its grid (a cluster size and a
number of users, under the baseline and every compared policy) per task, :func:`sweep_traces`
one simulation (a trace, a seed, a policy) per task. A cell depends on its arguments alone, so
the results, merged in grid order, are the same whatever runs them.
"""

import concurrent.futures
import importlib
import os
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from ._gangway import (
    POLICIES,
    _invalid,
    _uint,
    _wrong_type,
    simulate,
    sweep_cell as _sweep_cell,
    sweep_grid as _sweep_grid,
    sweep_records as _sweep_records,
)

# The built-in workloads `simulate(workload=...)` draws from a seed.
_BUILTIN_WORKLOADS = ("gpu-ml", "gpu-ml-heavy-tail", "team")


class SweepTable(List[Dict[str, Any]]):
    """The cells of :func:`sweep` or :func:`sweep_traces`: a list of dicts, one per record, in
    grid order. Always this type, whatever is installed; :meth:`to_pandas` needs pandas."""

    def to_pandas(self) -> Any:
        """The table as a pandas.DataFrame; ImportError without pandas."""
        try:
            pandas = importlib.import_module("pandas")
        except ImportError as error:
            raise ImportError(f"SweepTable.to_pandas() needs pandas: {error}") from error
        return pandas.DataFrame(list(self))


def _call(fn: Callable[..., Any], args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
    """A call submitted to a :class:`RayExecutor`, run in a Ray worker."""
    return fn(*args, **kwargs)


class RayExecutor(concurrent.futures.Executor):
    """A :class:`concurrent.futures.Executor` over Ray: each call submitted runs as a Ray task
    on the cluster this process is connected to (``ray.init(...)``; without it, Ray starts a
    local one at the first task, as Ray does), and its future is Ray's. ``options`` are
    ``ray.remote`` options for every task (``num_cpus=1`` by Ray's default). It neither starts
    nor stops the cluster: :meth:`shutdown` only refuses further calls. ImportError without
    ray."""

    def __init__(self, **options: Any) -> None:
        try:
            import ray
        except ImportError as error:
            raise ImportError(f"RayExecutor needs ray (pip install ray): {error}") from error
        self._task = ray.remote(**options)(_call) if options else ray.remote(_call)
        self._shut_down = False

    def submit(
        self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
    ) -> "concurrent.futures.Future[Any]":
        if self._shut_down:
            raise RuntimeError("cannot submit to a RayExecutor after shutdown()")
        future: "concurrent.futures.Future[Any]" = self._task.remote(fn, args, kwargs).future()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._shut_down = True


def _resolve(executor: Any) -> Any:
    """The executor a sweep runs its cells on: None (in this process), ``"ray"`` (a
    :class:`RayExecutor`), or what was given when it can run calls."""
    if executor is None:
        return None
    if isinstance(executor, str):
        if executor == "ray":
            return RayExecutor()
        raise _invalid(
            "executor",
            f"unknown engine {executor!r}: expected 'ray', a concurrent.futures.Executor, or an "
            "object with submit(fn, *args) returning futures",
        )
    if isinstance(executor, concurrent.futures.Executor) or callable(
        getattr(executor, "submit", None)
    ):
        return executor
    raise _wrong_type(
        executor,
        "executor",
        "None, 'ray', a concurrent.futures.Executor, or an object with submit(fn, *args) "
        "returning futures",
    )


def _run_cells(
    executor: Any, fn: Callable[..., Any], calls: Iterable[Tuple[Any, ...]]
) -> List[Any]:
    """``[fn(*args) for args in calls]``, each call submitted to `executor` as one task; the
    results in the order of `calls`. The first error raises, and the futures not yet done are
    cancelled."""
    futures = []
    try:
        for args in calls:
            future = executor.submit(fn, *args)
            if not callable(getattr(future, "result", None)):
                raise TypeError(
                    f"executor: submit() returned a {type(future).__name__}, not a future "
                    "with result()"
                )
            futures.append(future)
        return [future.result() for future in futures]
    except BaseException:
        for future in futures:
            cancel = getattr(future, "cancel", None)
            if callable(cancel):
                cancel()
        raise


def _sweep_task(index: int, spec: Dict[str, Any]) -> List[Dict[str, Any]]:
    """One task of :func:`sweep`: the records of the cell at `index` of the grid of `spec`."""
    return _sweep_cell(index, **spec)


def sweep(
    gpus: Optional[Sequence[int]] = None,
    users: Optional[Sequence[int]] = None,
    seed: int = 1,
    weeks: int = 2,
    policies: Optional[Sequence[str]] = None,
    executor: Any = None,
) -> SweepTable:
    """`gangway simulate --sweep`: cluster sizes (GPUs, nodes of up to 8) x numbers of users,
    each user their own account with the team workload's profile, for `weeks` weeks, under a
    baseline and each policy compared with it: `policies` names the baseline first (default
    ``["ssh", "full"]``; one policy alone is compared with ssh). Without `executor` the cells
    run in this process on every core; with one (a concurrent.futures.Executor, ``"ray"``, or
    any object whose ``submit(fn, *args)`` returns futures) each cell of the grid is one task.
    Returns a :class:`SweepTable`, the same whatever runs it."""
    runner = _resolve(executor)
    spec: Dict[str, Any] = {
        "gpus": gpus, "users": users, "seed": seed, "weeks": weeks, "policies": policies
    }
    if runner is None:
        return SweepTable(_sweep_records(**spec))
    # Checks every argument before a task is submitted.
    cells = len(_sweep_grid(**spec))
    results = _run_cells(runner, _sweep_task, [(index, spec) for index in range(cells)])
    return SweepTable(record for records in results for record in records)


def _trace_task(
    trace: str, label: str, seed: int, policy: str, jobs: Optional[int], faults: bool
) -> Dict[str, Any]:
    """One task of :func:`sweep_traces`: one simulation, as a record."""
    source: Dict[str, Any] = (
        {"workload": trace} if trace in _BUILTIN_WORKLOADS else {"trace": trace}
    )
    out = simulate(
        **source,
        policies=[policy],
        seed=seed,
        jobs=jobs,
        faults=seed if faults else None,
    )
    metrics = out["metrics"][policy]
    return {
        "trace": label,
        "seed": seed,
        "policy": policy,
        "jobs": out["jobs"],
        "wait_mean_s": metrics["wait"]["mean_s"],
        "wait_p95_s": metrics["wait"]["p95_s"],
        "bounded_slowdown": metrics["bounded_slowdown"],
        "utilization": metrics["utilization"],
        "makespan_s": metrics["makespan_s"],
        "metrics": metrics,
    }


def _names(value: Any, what: str) -> List[Any]:
    """`value` as a non-empty list; a lone string is refused (it is not a list of names)."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise _wrong_type(value, what, "a list")
    items = list(value)
    if not items:
        raise _invalid(what, "expected a non-empty list, got an empty one")
    return items


def _trace_calls(
    traces: Sequence[Any],
    policies: Optional[Sequence[str]] = None,
    seeds: Sequence[int] = (1,),
    jobs: Optional[int] = None,
    faults: bool = False,
) -> List[Tuple[Any, ...]]:
    """The arguments of :func:`sweep_traces`, checked, as the calls of :func:`_trace_task` in
    grid order."""
    traces = _names(traces, "traces")
    for i, trace in enumerate(traces):
        if not isinstance(trace, (str, os.PathLike)):
            raise _wrong_type(trace, f"traces[{i}]", "a path or a built-in workload name")
        if str(trace) not in _BUILTIN_WORKLOADS and not os.path.isfile(trace):
            raise _invalid(
                f"traces[{i}]",
                f"{str(trace)!r} is neither a file nor a built-in workload "
                f"({', '.join(_BUILTIN_WORKLOADS)})",
            )
    if policies is None:
        policies = ["ssh", "fcfs", "easy", "conservative", "full"]
    policies = _names(policies, "policies")
    for i, policy in enumerate(policies):
        if not isinstance(policy, str):
            raise _wrong_type(policy, f"policies[{i}]", "a str")
        if policy not in POLICIES:
            raise _invalid(
                f"policies[{i}]",
                f"unknown policy {policy!r}: expected one of {', '.join(POLICIES)}",
            )
    seeds = _names(seeds, "seeds")
    seeds = [_uint(seed, f"seeds[{i}]") for i, seed in enumerate(seeds)]
    if jobs is not None:
        jobs = _uint(jobs, "jobs")
    if not isinstance(faults, bool):
        raise _wrong_type(faults, "faults", "a bool")
    # A file by its absolute path, so that a worker started elsewhere (a Ray worker) finds it;
    # each record names it as given.
    return [
        (
            str(trace) if str(trace) in _BUILTIN_WORKLOADS else os.path.abspath(trace),
            str(trace),
            seed,
            policy,
            jobs,
            bool(faults),
        )
        for trace in traces
        for seed in seeds
        for policy in policies
    ]


def sweep_traces(
    traces: Sequence[Any],
    policies: Optional[Sequence[str]] = None,
    seeds: Sequence[int] = (1,),
    jobs: Optional[int] = None,
    faults: bool = False,
    executor: Any = None,
) -> SweepTable:
    """Policies x traces x seeds, one simulation per task, for research sweeps. Each of
    `traces` is a trace file (SWF, Alibaba CSV, as ``simulate(trace=...)`` reads) or a
    built-in workload (gpu-ml, gpu-ml-heavy-tail, team), which each seed draws anew; with
    ``faults=True`` the seed also draws the faults injected (``simulate(faults=seed)``), so
    that a trace's replays differ by seed too. `policies` are presets among
    :data:`POLICIES` (default ``simulate``'s: ssh, fcfs, easy, conservative, full), `jobs`
    the number of jobs a built-in workload draws (a trace file is replayed whole, as
    ``simulate`` replays it). Without `executor` the simulations run in this process on every
    core; with one, as for :func:`sweep`. Returns a :class:`SweepTable` in grid order
    (traces, then seeds, then policies as given) of records {trace, seed, policy, jobs,
    wait_mean_s, wait_p95_s, bounded_slowdown, utilization, makespan_s, metrics},
    ``metrics`` the policy's whole metrics as ``simulate`` gives them."""
    runner = _resolve(executor)
    calls = _trace_calls(traces, policies, seeds, jobs, faults)
    if runner is None:
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
            return SweepTable(_run_cells(pool, _trace_task, calls))
    return SweepTable(_run_cells(runner, _trace_task, calls))
