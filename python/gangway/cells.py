"""A sweep split into one process per cell, for a Slurm job array or any batch system
(docs/simulate.md, "Sweeps on Ray and as a Slurm job array"): ``gangway.sweep`` (one cell of
its grid per process) or ``gangway.sweep_traces`` (one simulation per process).

    python -m gangway.cells count --gpus 8,16 --users 2,4         # cells: the array's size
    python -m gangway.cells run 3 --gpus 8,16 --users 2,4 --out cell-3.json
    python -m gangway.cells merge cell-*.json --out sweep.json    # the records in grid order

    python -m gangway.cells count --traces kth.swf,gpu-ml --seeds 1,2 --policies fcfs,easy

Each ``run`` writes one JSON document (:func:`run`): the gangway version, the sweep's kind and
arguments, the cell's index, the number of cells and the cell's records. ``merge``
(:func:`merge`) checks that the documents are every cell of one sweep, each once, and writes
the records in grid order: the table of ``gangway.sweep`` (or ``gangway.sweep_traces``) with
the same arguments.
"""

import argparse
import json
import sys
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from ._gangway import GangwayError, __version__, sweep_grid
from ._sweeps import SweepTable, _sweep_task, _trace_calls, _trace_task

# The kinds of sweep, by the name of their function in `gangway`.
KINDS = ("sweep", "sweep_traces")

_Task = Tuple[Callable[..., Any], Tuple[Any, ...]]


def _plan(kind: str, arguments: Dict[str, Any]) -> Tuple[Dict[str, Any], List[_Task]]:
    """The arguments of a sweep of `kind` as a document records them (lists, defaults filled
    in), and its cells' tasks in grid order; the arguments checked."""
    if kind == "sweep":
        unknown = set(arguments) - {"gpus", "users", "seed", "weeks", "policies"}
        if unknown:
            raise TypeError(f"cells: sweep takes no argument {', '.join(sorted(unknown))}")
        spec: Dict[str, Any] = {"seed": 1, "weeks": 2, **arguments}
        for key in ("gpus", "users", "policies"):
            spec[key] = None if spec.get(key) is None else list(spec[key])
        cells = len(sweep_grid(**spec))
        return spec, [(_sweep_task, (index, spec)) for index in range(cells)]
    if kind == "sweep_traces":
        unknown = set(arguments) - {"traces", "policies", "seeds", "jobs", "faults"}
        if unknown:
            raise TypeError(
                f"cells: sweep_traces takes no argument {', '.join(sorted(unknown))}"
            )
        if "traces" not in arguments:
            raise TypeError("cells: sweep_traces needs traces")
        spec = {"policies": None, "seeds": [1], "jobs": None, "faults": False, **arguments}
        spec["traces"] = [str(trace) for trace in spec["traces"]]
        for key in ("policies", "seeds"):
            spec[key] = None if spec[key] is None else list(spec[key])
        calls = _trace_calls(**spec)
        return spec, [(_trace_task, call) for call in calls]
    raise ValueError(f"cells: unknown kind {kind!r}: expected {' or '.join(KINDS)}")


def count(kind: str = "sweep", **arguments: Any) -> int:
    """The number of cells of ``gangway.sweep(**arguments)`` (or of ``sweep_traces`` with
    ``kind="sweep_traces"``), the arguments checked."""
    return len(_plan(kind, arguments)[1])


def run(index: int, kind: str = "sweep", **arguments: Any) -> Dict[str, Any]:
    """The cell at `index` (from 0) of ``gangway.sweep(**arguments)`` (or of
    ``sweep_traces`` with ``kind="sweep_traces"``), run here, as the document :func:`merge`
    reads: ``{"gangway", "kind", "arguments", "cell", "cells", "records"}``. IndexError for
    an index beyond the grid."""
    spec, tasks = _plan(kind, arguments)
    if not 0 <= index < len(tasks):
        raise IndexError(
            f"cells: no cell {index}: the sweep has {len(tasks)} (0 to {len(tasks) - 1})"
        )
    fn, args = tasks[index]
    result = fn(*args)
    return {
        "gangway": __version__,
        "kind": kind,
        "arguments": spec,
        "cell": index,
        "cells": len(tasks),
        # A cell of `sweep` gives a record per compared policy, one of `sweep_traces` one.
        "records": result if kind == "sweep" else [result],
    }


def merge(documents: Iterable[Dict[str, Any]]) -> SweepTable:
    """The records of the cells' documents (:func:`run`, in any order) in grid order, as a
    :class:`gangway.SweepTable`. ValueError unless they are every cell of one sweep (same
    gangway version, kind and arguments), each once."""
    given = list(documents)
    by_index: Dict[Any, List[Dict[str, Any]]] = {}
    if not given:
        raise ValueError("merge: no cell documents")
    first = given[0]
    for document in given:
        for key in ("gangway", "kind", "arguments", "cells"):
            if document.get(key) != first.get(key):
                raise ValueError(
                    f"merge: cell {document.get('cell')!r} is of another sweep: its {key} is "
                    f"{document.get(key)!r}, cell {first.get('cell')!r}'s {first.get(key)!r}"
                )
        index = document.get("cell")
        if index in by_index:
            raise ValueError(f"merge: cell {index!r} is given twice")
        by_index[index] = document["records"]
    cells = first["cells"]
    missing = [index for index in range(cells) if index not in by_index]
    unknown = sorted(set(by_index) - set(range(cells)), key=repr)
    if missing or unknown:
        raise ValueError(
            f"merge: the sweep has {cells} cells; missing {missing}, unknown {unknown}"
        )
    return SweepTable(record for index in range(cells) for record in by_index[index])


def _numbers(text: str) -> List[int]:
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, got {text!r}")


def _names(text: str) -> List[str]:
    return text.split(",")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gangway.cells",
        description="gangway.sweep or gangway.sweep_traces split into one process per cell "
        "(a Slurm job array).",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def grid(sub: argparse.ArgumentParser) -> None:
        team = sub.add_argument_group("gangway.sweep (the default)")
        team.add_argument("--gpus", type=_numbers, help="cluster sizes, e.g. 8,16,32")
        team.add_argument("--users", type=_numbers, help="numbers of users, e.g. 2,4,8")
        team.add_argument("--seed", type=int, help="default 1")
        team.add_argument("--weeks", type=int, help="default 2")
        traces = sub.add_argument_group("gangway.sweep_traces (with --traces)")
        traces.add_argument("--traces", type=_names, help="files or built-ins, e.g. a.swf,gpu-ml")
        traces.add_argument("--seeds", type=_numbers, help="default 1")
        traces.add_argument("--jobs", type=int, help="jobs a built-in workload draws")
        traces.add_argument("--faults", action="store_true", help="the seed draws faults too")
        sub.add_argument("--policies", type=_names, help="e.g. ssh,full (sweep: baseline first)")

    grid(commands.add_parser("count", help="print the sweep's number of cells"))
    cell = commands.add_parser("run", help="run one cell and write its JSON document")
    cell.add_argument("index", type=int, help="the cell, from 0 (e.g. $SLURM_ARRAY_TASK_ID)")
    grid(cell)
    cell.add_argument("--out", help="the file to write (default: standard output)")
    merged = commands.add_parser("merge", help="merge the cells' documents in grid order")
    merged.add_argument("files", nargs="+", help="the cells' documents")
    merged.add_argument("--out", help="the file to write (default: standard output)")
    return parser


def _arguments(args: argparse.Namespace) -> Tuple[str, Dict[str, Any]]:
    """The kind and the arguments of the sweep the options name; ValueError for options of
    both kinds."""
    team = {key: getattr(args, key) for key in ("gpus", "users", "seed", "weeks")}
    traces = {"traces": args.traces, "seeds": args.seeds, "jobs": args.jobs}
    if args.faults:
        traces["faults"] = True
    if args.traces is None:
        given = [key for key in ("seeds", "jobs", "faults") if traces.get(key)]
        if given:
            raise ValueError(f"--{given[0]} is for --traces")
        kind, chosen = "sweep", team
    else:
        given = [key for key, value in team.items() if value is not None]
        if given:
            raise ValueError(f"--{given[0]} is not for --traces")
        kind, chosen = "sweep_traces", traces
    arguments = {key: value for key, value in chosen.items() if value is not None}
    if args.policies is not None:
        arguments["policies"] = args.policies
    return kind, arguments


def _write(value: Any, path: Optional[str]) -> None:
    text = json.dumps(value, indent=2) + "\n"
    if path is None:
        sys.stdout.write(text)
    else:
        with open(path, "w", encoding="utf-8") as file:
            file.write(text)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The command line (the module's documentation); returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "merge":
            documents = []
            for path in args.files:
                with open(path, encoding="utf-8") as file:
                    documents.append(json.load(file))
            _write(list(merge(documents)), args.out)
            return 0
        kind, arguments = _arguments(args)
        if args.command == "count":
            print(count(kind, **arguments))
        else:
            _write(run(args.index, kind, **arguments), args.out)
    except GangwayError as error:
        # Its message with the argument it is about (`gpus[1]: expected a positive integer`).
        parser.exit(2, f"{parser.prog}: error: {error.message}\n")
    except (OSError, ValueError, TypeError, IndexError, OverflowError) as error:
        parser.exit(2, f"{parser.prog}: error: {error}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
