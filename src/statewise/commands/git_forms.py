"""What a git command's own words say: whether it only lists, whether it opens an editor for a
message, and what kind of ref a push destination names. Plain functions of the words, no git run.
"""

from __future__ import annotations


def _git_listing(sub: str, values: list[str | None]) -> bool:
    """Whether ``git remote``/``tag``/``stash``/``config``/``notes``/``reflog`` only lists."""
    if any(v is None for v in values):
        return False
    words = [v for v in values if v is not None]
    if sub == "remote":
        return not [w for w in words if w not in ("-v", "--verbose")] or (words[0] in ("show", "get-url"))
    if sub == "tag":
        return not words or words[0] in ("-l", "--list", "-n", "--contains", "--points-at", "--merged",
                                         "--no-merged", "--sort") or words[0].startswith(("--sort=", "--format="))
    if sub == "stash":
        return bool(words) and words[0] in ("list", "show")
    if sub == "config":
        return bool(words) and words[0] in ("--get", "--get-all", "--get-regexp", "--list", "-l", "get", "list",
                                            "--show-origin", "--show-scope", "--name-only")
    if sub in ("notes", "reflog"):
        return not words or words[0] in ("list", "show")
    return False


_GIT_MESSAGE_EDITORS = frozenset({"commit", "tag"})


def _git_opens_editor(sub: str, values: list[str | None]) -> bool:
    """Whether ``git commit`` / ``git tag -a`` opens an editor for its message (no -m/-F/...)."""
    words = [v for v in values if v is not None]
    if len(words) < len(values):
        return False  # only known at run time: decided by the arguments' own checks
    if "-e" in words or "--edit" in words:
        return True
    short = "".join(w[1:] for w in words if w.startswith("-") and not w.startswith("--"))
    longs = {w.partition("=")[0] for w in words if w.startswith("--")}
    if sub == "tag":
        annotated = bool(set(short) & {"a", "s", "u"}) or bool(longs & {"--annotate", "--sign", "--local-user"})
        listing = bool(set(short) & {"l", "d", "v"}) or bool(longs & {"--list", "--delete", "--verify"})
        if not annotated or listing:
            return False
        return not (set(short) & {"m", "F"} or longs & {"--message", "--file"})
    if longs & {"--message", "--file", "--reuse-message", "--no-edit", "--dry-run", "--fixup", "--help"}:
        return False
    return not set(short) & {"m", "F", "C", "h"}


def _ref_name(destination: str) -> tuple[str, str | None]:
    """A push destination as the branch slot holds it, and its kind when it is not a branch."""
    if destination.startswith("refs/heads/"):
        return destination.removeprefix("refs/heads/"), None
    if destination.startswith("refs/tags/"):
        return destination, "tag"
    if destination.startswith("refs/"):
        return destination, "other"
    return destination, None
