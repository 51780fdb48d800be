"""Type stubs of gangway's Python bindings (docs/python.md)."""

import concurrent.futures
from os import PathLike
from typing import (
    Any,
    Callable,
    Dict,
    List,
    Mapping,
    Optional,
    Protocol,
    Sequence,
    Tuple,
    TypeVar,
    Union,
    final,
)

__all__ = [
    "GangwayError",
    "GangwayTypeError",
    "GangwayValueError",
    "Plugin",
    "POLICIES",
    "PROTOCOL_VERSION",
    "RayExecutor",
    "Scheduler",
    "SweepTable",
    "simulate",
    "sweep",
    "sweep_traces",
    "__version__",
]

_T = TypeVar("_T")

_JSON = Any
"""A JSON-shaped value: dicts with str keys, lists, str, int, float, bool, None."""

__version__: str
PROTOCOL_VERSION: int
"""The protocol version the shim's configure answers with."""
POLICIES: List[str]
"""The policy presets `simulate` accepts (ssh, fcfs, easy, conservative, full, sjf, las,
rlscheduler, conservative-compress)."""

class GangwayError(Exception):
    """A request the shim would refuse: `.kind` is the shim's error kind (parse,
    invalid_config, time_went_backwards, invalid_state, internal, an event error kind, or
    simulation), `.path` the field it is about as a tuple of dict keys and list positions
    (("cluster", "nodes", 1, "gpus", "count"); () when none), `.message` the shim's message,
    str() what was wrong in plain words. State is unchanged."""

    kind: str
    message: str
    path: Tuple[Union[str, int], ...]

class GangwayTypeError(GangwayError, TypeError):
    """An argument of the wrong type (a str where an int goes; a str where a list goes; a
    Plugin hook not callable)."""

class GangwayValueError(GangwayError, ValueError):
    """A value its field does not take (a negative time or seed, NaN, an unknown policy, a bad
    cluster or job, a rejected event with tick(strict=True))."""

@final
class Plugin:
    """A plug-in whose hooks are Python callables, added to a Scheduler's profile.

    order_key(job) -> int: higher first. score_node(job, group, node) -> float: higher is
    better, at `tier` with `weight`. veto_victim(preemptor, victim) -> str | (str, int) | None:
    a reason forbids the preemption (until the time in ms, with one). A callable that raises
    is a misbehaving plug-in: the tick completes and lists it in `plugin_faults` (kind
    "panic"); a NaN, infinite or overflowing score is listed there too (kind "non_finite" or
    "overflow"). An argument of the wrong type (a hook that is not callable, a tier that is
    not an int) raises GangwayTypeError, a weight that is not finite or a negative tier
    GangwayValueError, here."""

    @property
    def name(self) -> str: ...
    @property
    def tier(self) -> int: ...
    @property
    def weight(self) -> float: ...
    @property
    def partition(self) -> Optional[str]: ...
    @property
    def hooks(self) -> List[str]:
        """The hooks it implements (order, node_score, victim_veto)."""
    def __new__(
        cls,
        name: str,
        *,
        order_key: Optional[Callable[[Dict[str, Any]], int]] = ...,
        score_node: Optional[Callable[[Dict[str, Any], int, Dict[str, Any]], float]] = ...,
        veto_victim: Optional[
            Callable[[Dict[str, Any], Dict[str, Any]], Union[str, Tuple[str, int], None]]
        ] = ...,
        tier: int = ...,
        weight: float = ...,
        partition: Optional[str] = ...,
    ) -> "Plugin": ...

@final
class Scheduler:
    """A gangway scheduler: the shim's protocol as methods. Thread-safe: concurrent calls wait
    for each other; the GIL is released while the scheduler works."""

    @property
    def plugins(self) -> List[Plugin]:
        """The Python plug-ins this scheduler was built with."""
    def __new__(
        cls, cluster: Mapping[str, _JSON], plugins: Optional[Sequence[Plugin]] = ...
    ) -> "Scheduler":
        """Configures a scheduler for a CLUSTER dict; GangwayError(invalid_config) if bad."""
    def tick(
        self,
        at_ms: int,
        events: Optional[Sequence[Mapping[str, _JSON]]] = ...,
        *,
        strict: bool = ...,
    ) -> Dict[str, Any]:
        """Applies events at at_ms, runs one pass: the shim's tick response object (ok, at_ms,
        decisions, rejected, next_wakeup_ms, plugin_faults when any). With strict=True a
        rejected event raises (GangwayValueError or GangwayTypeError) and nothing changes."""
    def explain(self, at_ms: Optional[int] = ..., detail: Optional[bool] = ...) -> Dict[str, Any]:
        """The shim's explain response: pending (with reasons), running; detail adds shares,
        priorities and admission_usage."""
    def what_if(self, job: Mapping[str, _JSON]) -> Dict[str, Any]:
        """When and where job would start if submitted now: {ok, start_ms, placement}."""
    def snapshot(self) -> Dict[str, Any]:
        """The whole state (the shim's snapshot "state"), for Scheduler.restore."""
    @staticmethod
    def restore(state: Mapping[str, _JSON], plugins: Optional[Sequence[Plugin]] = ...) -> "Scheduler":
        """A scheduler restored from snapshot(); pass the same plugins again."""
    def reconfigure(self, cluster: Mapping[str, _JSON]) -> None:
        """New partitions, queues, cohorts, accounts, QoS and policy; nodes and jobs kept."""
    def _last_timings(self) -> Dict[str, int]:
        """Nanoseconds of the last call: to_rust_ns, handle_ns, to_python_ns."""

def simulate(
    workload: Optional[str] = ...,
    trace: Optional[Union[str, "PathLike[str]"]] = ...,
    policies: Optional[Sequence[str]] = ...,
    cluster: Optional[Mapping[str, _JSON]] = ...,
    seed: int = ...,
    jobs: Optional[int] = ...,
    overrun: str = ...,
    checkpoint_delay_s: int = ...,
    faults: Optional[int] = ...,
    dataframe: bool = ...,
    team: Optional[Mapping[str, _JSON]] = ...,
    one_event_per_tick: bool = ...,
    qos_priority: Optional[Union[str, Mapping[str, int]]] = ...,
    non_positive_request: Optional[Union[str, int]] = ...,
) -> Dict[str, Any]:
    """Simulates a built-in workload (gpu-ml, gpu-ml-heavy-tail, team with the team file's
    fields in `team`) or a trace (SWF, Alibaba CSV)
    under each policy: {workload, nodes, jobs, policies, metrics: {policy: dict}, schedules:
    {policy: list of job records, or a pandas.DataFrame with dataframe=True}}. Ctrl-C raises
    KeyboardInterrupt between ticks. With a trace, `qos_priority` ("none", "default",
    "CLASS=N,..." or {class: int}) gives an Alibaba pod's QoS class a base priority, and
    `non_positive_request` ("run-time", "skip" or seconds > 0) the time limit of an SWF job
    that requested none; a bad value raises ValueError."""


class SweepTable(List[Dict[str, Any]]):
    """The records of sweep() (gpus, users, jobs, baseline, policy, wait_baseline_s,
    wait_policy_s, wait_saved, idle_baseline_hours, idle_policy_hours, idle_saved, pays_off)
    or of sweep_traces() (trace, seed, policy, jobs, wait_mean_s, wait_p95_s,
    bounded_slowdown, utilization, makespan_s, metrics), in grid order."""

    def to_pandas(self) -> Any:
        """A pandas.DataFrame of the cells; ImportError without pandas."""
        ...

class _Submitter(Protocol):
    """What a sweep runs its cells on: submit(fn, *args) returns a future with result()."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any: ...

_Executor = Union[concurrent.futures.Executor, _Submitter, str]
"""A sweep's executor: a concurrent.futures.Executor (RayExecutor is one), any object whose
submit(fn, *args) returns futures (a dask.distributed.Client), or "ray"."""

class RayExecutor(concurrent.futures.Executor):
    """Each submitted call runs as a Ray task on the cluster this process is connected to
    (ray.init); `options` are ray.remote options for every task. Neither starts nor stops
    the cluster. ImportError without ray."""

    def __init__(self, **options: Any) -> None: ...
    def submit(
        self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[_T]: ...
    def shutdown(self, wait: bool = ..., *, cancel_futures: bool = ...) -> None: ...

def sweep(
    gpus: Optional[Sequence[int]] = ...,
    users: Optional[Sequence[int]] = ...,
    seed: int = ...,
    weeks: int = ...,
    policies: Optional[Sequence[str]] = ...,
    executor: Optional[_Executor] = ...,
) -> SweepTable:
    """gangway simulate --sweep: GPUs x users, a baseline (first of `policies`, default
    ssh) against each other policy (default full). In this process on every core, or one
    cell per task on `executor`; the same table either way."""
    ...

def sweep_traces(
    traces: Sequence[Union[str, PathLike[str]]],
    policies: Optional[Sequence[str]] = ...,
    seeds: Sequence[int] = ...,
    jobs: Optional[int] = ...,
    faults: bool = ...,
    executor: Optional[_Executor] = ...,
) -> SweepTable:
    """Policies x traces (files, or built-in workloads drawn from the seed) x seeds (with
    faults=True, the seed of the faults injected too), one simulation per task on
    `executor`, or in this process on every core; the same table either way."""
    ...
