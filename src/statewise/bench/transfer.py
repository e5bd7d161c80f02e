"""The RQ6 seen/unseen split of the primary set: ``benchmarks/cases/transfer.json``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from statewise.bench.metrics import UNLISTED
from statewise.errors import InputError, InputTooLargeError
from statewise.limits import MAX_CASE_BYTES, read_capped

__all__ = ["TRANSFER_DIMENSIONS", "TRANSFER_FILE", "TRANSFER_FORMAT", "TRANSFER_SET", "CaseTransfer",
           "TransferError", "TransferSplit", "load_transfer"]

#: The set the RQ6 split (``transfer.json``) describes.
TRANSFER_SET = "primary"
# --- RQ6: the seen/unseen split ---------------------------------------------------------------

TRANSFER_FILE = "transfer.json"
TRANSFER_FORMAT = "statewise-transfer/1"
#: The interface units a primary case is compared on against the dev set, in report order.
TRANSFER_DIMENSIONS = ("repository", "operation", "state_type", "state_action")


class TransferError(InputError):
    """A ``transfer.json`` that does not validate: ``source`` is the file, ``field`` the path in it."""

    def __init__(self, source: str, field: str, problem: str) -> None:
        self.source = source
        self.field = field
        self.problem = problem
        super().__init__(f"{source}: {field}: {problem}" if field else f"{source}: {problem}")


@dataclass(frozen=True)
class CaseTransfer:
    """Which interface dimensions of one case are new against the development set."""

    unseen: tuple[str, ...]  # the dimensions (TRANSFER_DIMENSIONS) with a unit the dev set lacks
    fully_unseen: bool

    @property
    def tags(self) -> tuple[str, ...]:
        """``seen``, or ``unseen`` with ``fully_unseen`` and one ``new_<dimension>`` per new dimension."""
        if not self.unseen:
            return ("seen",)
        return ("unseen", *(("fully_unseen",) if self.fully_unseen else ()), *(f"new_{d}" for d in self.unseen))


@dataclass(frozen=True)
class TransferSplit:
    """The RQ6 split of the primary set (``benchmarks/cases/transfer.json``), by case id."""

    source: str
    cases: Mapping[str, CaseTransfer]
    set: str = TRANSFER_SET

    def tags(self, case_id: str) -> tuple[str, ...]:
        """The case's transfer tags; ``transfer_unlisted`` (in no group) when the file lacks it."""
        entry = self.cases.get(case_id)
        return entry.tags if entry is not None else (UNLISTED,)


def load_transfer(path: str | Path) -> TransferSplit | None:
    """Read a ``statewise-transfer/1`` file; None when it does not exist.

    Only ``format`` and ``cases`` are read (the dev units and the summary are for people):
    each case needs ``unseen`` (a boolean per dimension of :data:`TRANSFER_DIMENSIONS`),
    ``any_unseen`` and ``fully_unseen``, which must agree with ``unseen``. Anything else is a
    :class:`TransferError` naming the file and the field."""
    path = Path(path)
    if not path.is_file():
        return None
    source = str(path)
    try:
        data = json.loads(read_capped(path, MAX_CASE_BYTES, "a case file").decode("utf-8"))
    except InputTooLargeError as error:
        raise TransferError(source, "", error.problem) from None
    except (OSError, UnicodeDecodeError) as error:
        raise TransferError(source, "", f"cannot read: {error}") from None
    except json.JSONDecodeError as error:
        raise TransferError(source, "", f"not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise TransferError(source, "", f"expected a JSON object, got {type(data).__name__}")
    if data.get("format") != TRANSFER_FORMAT:
        raise TransferError(source, "format", f"expected {TRANSFER_FORMAT!r}, got {data.get('format')!r}")
    cases = data.get("cases")
    if not isinstance(cases, dict):
        raise TransferError(source, "cases", "expected an object of case id -> split"
                            + ("" if cases is not None else "; the field is missing"))
    parsed: dict[str, CaseTransfer] = {}
    for case_id, entry in cases.items():
        where = f"cases.{case_id}"
        if not isinstance(entry, dict):
            raise TransferError(source, where, f"expected an object, got {type(entry).__name__}")
        unseen = entry.get("unseen")
        if not isinstance(unseen, dict):
            raise TransferError(source, f"{where}.unseen", "expected an object of dimension -> true/false")
        extra = sorted(set(unseen) - set(TRANSFER_DIMENSIONS))
        if extra:
            raise TransferError(source, f"{where}.unseen.{extra[0]}",
                                f"unknown dimension; dimensions are {', '.join(TRANSFER_DIMENSIONS)}")
        for dimension in TRANSFER_DIMENSIONS:
            if not isinstance(unseen.get(dimension), bool):
                problem = "required field is missing" if dimension not in unseen else \
                    f"expected true or false, got {unseen[dimension]!r}"
                raise TransferError(source, f"{where}.unseen.{dimension}", problem)
        new = tuple(d for d in TRANSFER_DIMENSIONS if unseen[d])
        for name, implied in (("any_unseen", bool(new)), ("fully_unseen", len(new) == len(TRANSFER_DIMENSIONS))):
            value = entry.get(name)
            if not isinstance(value, bool):
                raise TransferError(source, f"{where}.{name}", "required field is missing" if name not in entry
                                    else f"expected true or false, got {value!r}")
            # A hand edit that changes one flag and not the other would silently move the case.
            if value != implied:
                raise TransferError(source, f"{where}.{name}",
                                    f"is {str(value).lower()} but unseen says {str(implied).lower()}")
        parsed[str(case_id)] = CaseTransfer(unseen=new, fully_unseen=entry["fully_unseen"])
    return TransferSplit(source=source, cases=parsed)
