"""Type stubs of the native module (`gangway._gangway`) for the package's own Python modules:
what they import from it. The public API, which the package re-exports, is typed in
__init__.pyi."""

from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import POLICIES as POLICIES
from . import GangwayError as GangwayError
from . import GangwayTypeError as GangwayTypeError
from . import GangwayValueError as GangwayValueError
from . import Plugin as Plugin
from . import PROTOCOL_VERSION as PROTOCOL_VERSION
from . import Scheduler as Scheduler
from . import __version__ as __version__
from . import simulate as simulate

__all__ = [
    "GangwayError",
    "GangwayTypeError",
    "GangwayValueError",
    "PROTOCOL_VERSION",
    "__version__",
    "Scheduler",
    "Plugin",
    "simulate",
    "sweep_records",
    "sweep_grid",
    "sweep_cell",
    "_wrong_type",
    "_invalid",
    "_uint",
    "POLICIES",
]

def _wrong_type(given: object, path: str, expected: str) -> GangwayTypeError:
    """The GangwayTypeError of the argument at `path` (a wire path: "traces[0]"): expected
    `expected`, got `given`."""
    ...

def _invalid(path: str, plain: str) -> GangwayValueError:
    """The GangwayValueError of the argument at `path`, saying `plain`."""
    ...

def _uint(given: object, path: str) -> int:
    """`given`, an int from 0 to 2**64 - 1; else the GangwayTypeError or GangwayValueError of
    the argument at `path`."""
    ...

def sweep_records(
    gpus: Optional[Sequence[int]] = ...,
    users: Optional[Sequence[int]] = ...,
    seed: int = ...,
    weeks: int = ...,
    policies: Optional[Sequence[str]] = ...,
) -> List[Dict[str, Any]]:
    """The records of gangway.sweep(...), run in this process."""
    ...

def sweep_grid(
    gpus: Optional[Sequence[int]] = ...,
    users: Optional[Sequence[int]] = ...,
    seed: int = ...,
    weeks: int = ...,
    policies: Optional[Sequence[str]] = ...,
) -> List[Tuple[int, int]]:
    """The (gpus, users) of gangway.sweep(...)'s cells in grid order, the arguments checked."""
    ...

def sweep_cell(
    index: int,
    gpus: Optional[Sequence[int]] = ...,
    users: Optional[Sequence[int]] = ...,
    seed: int = ...,
    weeks: int = ...,
    policies: Optional[Sequence[str]] = ...,
) -> List[Dict[str, Any]]:
    """The records of the cell at `index` of gangway.sweep(...)'s grid, run in this thread."""
    ...
