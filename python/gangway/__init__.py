"""gangway: a deterministic GPU-cluster scheduling-policy library, from Python.

The API mirrors the shim's JSON-lines protocol (docs/protocol.md): the same JSON-shaped dicts go
in and come out, and every refusal is a :class:`GangwayError` with the shim's error kind.

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
    Plugin,
    Scheduler,
    __version__,
    simulate,
    sweep_records as _sweep_records,
)


class SweepTable(list):
    """The cells of :func:`sweep`: a list of dicts, one per cell in grid order (users, then
    GPUs), with the fields gpus, users, jobs, wait_ssh_s, wait_full_s, wait_saved,
    idle_ssh_hours, idle_full_hours, idle_saved and pays_off. Always this type, whatever is
    installed; :meth:`to_pandas` needs pandas."""

    def to_pandas(self):
        """The table as a pandas.DataFrame; ImportError without pandas."""
        try:
            import pandas
        except ImportError as error:
            raise ImportError(f"SweepTable.to_pandas() needs pandas: {error}") from error
        return pandas.DataFrame(list(self))


def sweep(gpus=None, users=None, seed=1, weeks=2):
    """`gangway simulate --sweep`: cluster sizes (GPUs, nodes of up to 8) x numbers of users,
    each user their own account with the team workload's profile, ssh (no scheduler) against
    full, for `weeks` weeks. Returns a :class:`SweepTable`."""
    return SweepTable(_sweep_records(gpus=gpus, users=users, seed=seed, weeks=weeks))

__all__ = [
    "GangwayError",
    "Plugin",
    "POLICIES",
    "PROTOCOL_VERSION",
    "Scheduler",
    "SweepTable",
    "simulate",
    "sweep",
    "__version__",
]
