"""The size caps on every input StateWise reads from a file or a stream, in one place.

Each cap is far above what a real user writes (docs/cli.md, "Input size limits", argues each
one) and low enough that refusing costs nothing: the size is checked before the input is read
or parsed, so a 20 MB file is refused in milliseconds, not after minutes of parsing. A refusal
is one :class:`~statewise.errors.InputTooLargeError` naming the input, its size and the cap.

This module imports nothing at import time: the hook's front door reads its cap from here.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os

__all__ = [
    "MAX_ACTION_BYTES",
    "MAX_CASE_BYTES",
    "MAX_CONTRACT_BYTES",
    "MAX_HOOK_INPUT_BYTES",
    "MAX_MEMORY_FILE_BYTES",
    "MAX_SETTINGS_BYTES",
    "read_capped",
]

_MIB = 1024 * 1024

#: A contract file (each part of one, each file ``extends:`` names). The built-in coding
#: contract and its catalogue together are under 200 KB.
MAX_CONTRACT_BYTES = 512 * 1024
#: A benchmark case file (YAML or JSON). The largest in benchmarks/cases is 72 KB.
MAX_CASE_BYTES = 1 * _MIB
#: An agent memory file (CLAUDE.md, AGENTS.md, GEMINI.md, ...). Each is loaded into the model's
#: context at every session start, so one that large would fill the context many times over.
MAX_MEMORY_FILE_BYTES = 1 * _MIB
#: The JSON a client writes on a hook's stdin. Its largest part is a Write's file content or a
#: post-tool output, both bounded by what a model writes or reads in one turn (well under 1 MB).
MAX_HOOK_INPUT_BYTES = 8 * _MIB
#: StateWise's settings file (``.statewise/config.toml``, the user's ``config.toml``): a handful
#: of keys, a few hundred bytes when written by hand.
MAX_SETTINGS_BYTES = 64 * 1024
#: A proposed action for ``statewise guard --action`` (one JSON object: a tool, an operation
#: and its arguments, the largest being a file write's content, as for the hook's stdin).
MAX_ACTION_BYTES = 8 * _MIB


def read_capped(path: str | os.PathLike[str], limit: int, what: str) -> bytes:
    """The bytes of the file at ``path``, or InputTooLargeError when it holds more than ``limit``.

    A regular file's size is taken from the open descriptor before one byte is read; anything
    else (a pipe, a device) is read up to one byte past the cap. OSError passes through, for the
    caller to word.
    """
    import os

    from statewise.errors import InputTooLargeError

    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise InputTooLargeError(os.fspath(path), size, limit, what)
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise InputTooLargeError(os.fspath(path), len(data), limit, what)
    return data
