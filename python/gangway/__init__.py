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
    """The cells of :func:`sweep`: a list of dicts, one per cell and compared policy in grid
    order (users, then GPUs, then the policies as given), with the fields gpus, users, jobs,
    baseline, policy, wait_baseline_s, wait_policy_s, wait_saved, idle_baseline_hours,
    idle_policy_hours, idle_saved and pays_off. Always this type, whatever is installed;
    :meth:`to_pandas` needs pandas."""

    def to_pandas(self):
        """The table as a pandas.DataFrame; ImportError without pandas."""
        try:
            import pandas
        except ImportError as error:
            raise ImportError(f"SweepTable.to_pandas() needs pandas: {error}") from error
        return pandas.DataFrame(list(self))


def sweep(gpus=None, users=None, seed=1, weeks=2, policies=None):
    """`gangway simulate --sweep`: cluster sizes (GPUs, nodes of up to 8) x numbers of users,
    each user their own account with the team workload's profile, for `weeks` weeks, under a
    baseline and each policy compared with it: `policies` names the baseline first (default
    ``["ssh", "full"]``; one policy alone is compared with ssh). Returns a
    :class:`SweepTable`."""
    return SweepTable(
        _sweep_records(gpus=gpus, users=users, seed=seed, weeks=weeks, policies=policies)
    )

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
