"""gangway: a deterministic GPU-cluster scheduling-policy library, from Python.

The API mirrors the shim's JSON-lines protocol (docs/protocol.md): the same JSON-shaped dicts go
in and come out, and every refusal is a :class:`GangwayError` with the shim's error kind (a
:class:`GangwayTypeError` for an ill-typed argument, a :class:`GangwayValueError` for an invalid
value).

>>> import gangway
>>> s = gangway.Scheduler({"nodes": [{"name": "n1", "cpus": 8, "gpus": {"model": "a100", "count": 4}}]})
>>> out = s.tick(0, [{"type": "submit", "job": {"id": "a", "time_limit_ms": 60000, "groups": [{"count": 1, "gpus": 2}]}}])
>>> out["decisions"][0]["type"], out["decisions"][0]["job"]
('start', 'a')

docs/python.md has the whole guide.
"""

from ._gangway import (
    POLICIES,
    PROTOCOL_VERSION,
    GangwayError,
    GangwayTypeError,
    GangwayValueError,
    Plugin,
    Scheduler,
    __version__,
    simulate,
)
from ._sweeps import RayExecutor, SweepTable, sweep, sweep_traces

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
