"""The plain text of a retrieval (statewise.render.retrieval_plain) is byte for byte what rich
prints for the same view to a console that is not a terminal, for generated records of every
shape: ``statewise record list``'s front door prints it without importing rich."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.console import Console

from statewise.render import RICH_ALTERS, retrieval_plain, retrieval_view
from statewise.store.rows import RecordRow, RetrievalRows

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)

#: Any text, the characters rich alters and wide, combining and right-to-left ones made likely.
TEXT = st.lists(st.one_of(st.characters(), st.sampled_from([
    "\t", "\x07", "\x08", "\x0b", "\x0c", "\r", "\x7f", "\x00", "\n", "\x1b", "[", "]", "漢", "😀", "é",
    "\u0301", "\u200b", "ا", " ", "[bold]", "\\", ":smile:"])), max_size=30).map("".join)
TIMES = st.one_of(st.none(), st.integers(min_value=-10, max_value=10**8).map(lambda s: NOW - timedelta(seconds=s)))
VALUES = st.one_of(TEXT, st.booleans(), st.integers(), st.lists(TEXT, max_size=3))


@st.composite
def rows(draw: st.DrawFn) -> RecordRow:
    observed = draw(TIMES) or NOW
    return RecordRow(
        id=draw(TEXT), key=draw(TEXT), scope=draw(TEXT), value_type="string", value=draw(VALUES),
        status=draw(st.sampled_from(["active", "superseded", "expired", "retracted"])), observed_at=observed,
        recorded_at=observed, verified_at=draw(TIMES), ttl_seconds=None, source=draw(TEXT), authority="developer",
        actor=draw(TEXT), reference=None, supersedes=None, superseded_by=None, version=1, status_reason=None,
        status_changed_at=None)


RESULTS = st.builds(RetrievalRows, task=TEXT, records=st.lists(rows(), max_size=4).map(tuple),
                    stale=st.lists(rows(), max_size=2).map(tuple), shadowed=st.lists(rows(), max_size=2).map(tuple),
                    near_misses=st.lists(rows(), max_size=2).map(tuple))


def _rich(result: RetrievalRows, width: int) -> str:
    # The command line's console for a pipe (statewise.cli.context.LazyConsole): soft-wrapped,
    # no colour; not a terminal.
    out = io.StringIO()
    Console(file=out, soft_wrap=True, no_color=True, force_terminal=False, width=width).print(
        retrieval_view(result, NOW))
    return out.getvalue()


ORDINARY = RetrievalRows(task="user:alice,workspace:/src/app", records=(RecordRow(
    id="rec_1", key="git.default_branch", scope="global", value_type="string", value="main", status="active",
    observed_at=NOW - timedelta(seconds=90), recorded_at=NOW, verified_at=None, ttl_seconds=None, source="developer",
    authority="developer", actor="alice", reference=None, supersedes=None, superseded_by=None, version=1,
    status_reason=None, status_changed_at=None),))


@settings(max_examples=300, deadline=None)
@given(RESULTS, st.sampled_from([20, 80, 200]))
@example(ORDINARY, 80)
@example(RetrievalRows(task="", records=()), 80)
def test_the_plain_view_is_what_rich_prints_to_a_pipe(result: RetrievalRows, width: int) -> None:
    plain = retrieval_plain(result, NOW)
    if plain is None:  # a character rich alters: the caller renders with rich instead
        text = "".join(piece for line in _lines(result) for piece in line)
        assert not RICH_ALTERS.isdisjoint(text)
    else:
        assert plain == _rich(result, width)


def _lines(result: RetrievalRows) -> list[list[str]]:
    from statewise.render import retrieval_lines

    return [[piece for piece, _ in line] for line in retrieval_lines(result, NOW)]


def test_an_ordinary_view_is_plain_and_names_what_applies() -> None:
    plain = retrieval_plain(ORDINARY, NOW)
    assert plain == ("Records that apply to user:alice,workspace:/src/app\n"
                     "  git.default_branch = main  [global]  active  developer:alice  observed 1m ago, "
                     "verified never  rec_1\n"
                     "1 applying; held back: 0 stale, 0 shadowed, 0 near_misses\n")
