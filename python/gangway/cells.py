"""A :func:`gangway.sweep` split into one process per cell, for a Slurm job array or any
batch system (docs/simulate.md, "A sweep as a Slurm job array").

    python -m gangway.cells count --gpus 8,16 --users 2,4         # cells: the array's size
    python -m gangway.cells run 3 --gpus 8,16 --users 2,4 --out cell-3.json
    python -m gangway.cells merge cell-*.json --out sweep.json    # the records in grid order

Each ``run`` writes one JSON document (:func:`run`): the gangway version, the sweep's
arguments, the cell's index, the grid's number of cells and the cell's records. ``merge``
(:func:`merge`) checks that the documents are every cell of one sweep, each once, and writes
the records in grid order: the records of ``gangway.sweep`` with the same arguments, which is
the JSON of ``gangway simulate --sweep --json``.
"""

import argparse
import json
import sys
from typing import Any, Dict, Iterable, List, Optional, Sequence

from ._gangway import __version__, sweep_cell, sweep_grid
from ._sweeps import SweepTable


def _spec(
    gpus: Optional[Sequence[int]] = None,
    users: Optional[Sequence[int]] = None,
    seed: int = 1,
    weeks: int = 2,
    policies: Optional[Sequence[str]] = None,
) -> Dict[str, Any]:
    return {
        "gpus": None if gpus is None else list(gpus),
        "users": None if users is None else list(users),
        "seed": seed,
        "weeks": weeks,
        "policies": None if policies is None else list(policies),
    }


def count(
    gpus: Optional[Sequence[int]] = None,
    users: Optional[Sequence[int]] = None,
    seed: int = 1,
    weeks: int = 2,
    policies: Optional[Sequence[str]] = None,
) -> int:
    """The number of cells of ``gangway.sweep(...)`` with these arguments (checked)."""
    return len(sweep_grid(**_spec(gpus, users, seed, weeks, policies)))


def run(
    index: int,
    gpus: Optional[Sequence[int]] = None,
    users: Optional[Sequence[int]] = None,
    seed: int = 1,
    weeks: int = 2,
    policies: Optional[Sequence[str]] = None,
) -> Dict[str, Any]:
    """The cell at `index` (from 0) of ``gangway.sweep(...)`` with these arguments, run here,
    as the document :func:`merge` reads: ``{"gangway", "sweep", "cell", "cells", "records"}``.
    IndexError for an index beyond the grid."""
    spec = _spec(gpus, users, seed, weeks, policies)
    cells = len(sweep_grid(**spec))
    if not 0 <= index < cells:
        raise IndexError(f"cells: no cell {index}: the sweep has {cells} (0 to {cells - 1})")
    return {
        "gangway": __version__,
        "sweep": spec,
        "cell": index,
        "cells": cells,
        "records": sweep_cell(index, **spec),
    }


def merge(documents: Iterable[Dict[str, Any]]) -> SweepTable:
    """The records of the cells' documents (:func:`run`, in any order) in grid order, as a
    :class:`gangway.SweepTable`. ValueError unless they are every cell of one sweep (same
    gangway version and arguments), each once."""
    given = list(documents)
    by_index: Dict[Any, List[Dict[str, Any]]] = {}
    if not given:
        raise ValueError("merge: no cell documents")
    first = given[0]
    for document in given:
        for key in ("gangway", "sweep", "cells"):
            if document.get(key) != first.get(key):
                raise ValueError(
                    f"merge: cell {document.get('cell')!r} is of another sweep: its {key} is "
                    f"{document.get(key)!r}, cell {first.get('cell')!r}'s {first.get(key)!r}"
                )
        index = document.get("cell")
        if index in by_index:
            raise ValueError(f"merge: cell {index!r} is given twice")
        by_index[index] = document["records"]
    missing = [index for index in range(first["cells"]) if index not in by_index]
    if missing or len(by_index) != first["cells"]:
        raise ValueError(
            f"merge: the sweep has {first['cells']} cells; missing {missing}, "
            f"unknown {sorted(set(by_index) - set(range(first['cells'])), key=repr)}"
        )
    return SweepTable(
        record for index in range(first["cells"]) for record in by_index[index]
    )


def _numbers(text: str) -> List[int]:
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, got {text!r}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gangway.cells",
        description="gangway.sweep split into one process per cell (a Slurm job array).",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def grid(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--gpus", type=_numbers, help="cluster sizes, e.g. 8,16,32")
        sub.add_argument("--users", type=_numbers, help="numbers of users, e.g. 2,4,8")
        sub.add_argument("--seed", type=int, default=1)
        sub.add_argument("--weeks", type=int, default=2)
        sub.add_argument(
            "--policies", type=lambda text: text.split(","), help="baseline first, e.g. ssh,full"
        )

    grid(commands.add_parser("count", help="print the sweep's number of cells"))
    cell = commands.add_parser("run", help="run one cell and write its JSON document")
    cell.add_argument("index", type=int, help="the cell, from 0 (e.g. $SLURM_ARRAY_TASK_ID)")
    grid(cell)
    cell.add_argument("--out", help="the file to write (default: standard output)")
    merged = commands.add_parser("merge", help="merge the cells' documents in grid order")
    merged.add_argument("files", nargs="+", help="the cells' documents")
    merged.add_argument("--out", help="the file to write (default: standard output)")
    return parser


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
        grid = {
            "gpus": args.gpus,
            "users": args.users,
            "seed": args.seed,
            "weeks": args.weeks,
            "policies": args.policies,
        }
        if args.command == "count":
            print(count(**grid))
        else:
            _write(run(args.index, **grid), args.out)
    except (OSError, ValueError, IndexError, OverflowError) as error:
        parser.exit(2, f"{parser.prog}: error: {error}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
