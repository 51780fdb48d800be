"""Shared fixtures of the gangway Python tests."""

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

CLUSTER = {
    "nodes": [
        {"name": f"n{i}", "cpus": 32, "memory_mib": 256000,
         "gpus": {"model": "a100", "count": 4}}
        for i in (1, 2)
    ],
}


def job(job_id, gpus=1, count=1, time_limit_ms=60_000, **extra):
    """A JOB dict of one task group."""
    spec = {"id": job_id, "time_limit_ms": time_limit_ms,
            "groups": [{"count": count, "gpus": gpus}]}
    spec.update(extra)
    return spec


def submit(job_id, **kwargs):
    return {"type": "submit", "job": job(job_id, **kwargs)}


def shim_binary():
    """The release `gangway` binary: $GANGWAY_BIN, else target/release/gangway under
    $CARGO_TARGET_DIR or the repository; None when not built."""
    candidates = []
    if os.environ.get("GANGWAY_BIN"):
        candidates.append(pathlib.Path(os.environ["GANGWAY_BIN"]))
    if os.environ.get("CARGO_TARGET_DIR"):
        candidates.append(pathlib.Path(os.environ["CARGO_TARGET_DIR"]) / "release" / "gangway")
    candidates.append(REPO / "target" / "release" / "gangway")
    for path in candidates:
        if path.is_file():
            return path
    return None


@pytest.fixture
def cluster():
    return {"nodes": [dict(n) for n in CLUSTER["nodes"]]}


def wire_path(path):
    """An error's `.path` tuple written as the shim's `error.path` (`events[0].job`); None for
    `()`."""
    if not path:
        return None
    written = ""
    for i, part in enumerate(path):
        if isinstance(part, int):
            written += f"[{part}]"
        else:
            written += f".{part}" if i else part
    return written
