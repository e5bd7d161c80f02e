"""Reading a contract's YAML safely: size, depth, alias and expansion limits, duplicate keys.

Every limit is checked before anything is built, and each refusal is one ContractError
naming the input and the field path. YAML is imported at the first parse, so a process that
gets its contract from the compiled cache never imports it.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from statewise.errors import ContractError
from statewise.limits import MAX_CONTRACT_BYTES

if TYPE_CHECKING:
    import yaml  # imported on first use at run time (see loaders); named here for annotations

    #: libyaml's safe loader or the pure-Python one (the stubs give them no common base).
    LoaderClass = type[yaml.SafeLoader] | type[yaml.CSafeLoader]

#: Deepest nesting of mappings and lists (a real contract needs about 7).
MAX_CONTRACT_DEPTH = 32
#: Most alias uses (``*name``) in one contract.
MAX_CONTRACT_ALIASES = 200
#: Most YAML nodes once every alias is expanded ("billion laughs" expands exponentially).
MAX_CONTRACT_NODES = 50_000

def _construct_unique_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    import yaml  # noqa: PLC0415 - see loaders

    seen: dict[Any, Any] = {}
    for key_node, _value_node in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue  # "<<: *anchor" entries may be overridden by explicit keys
        key = loader.construct_object(key_node, deep=True)
        try:
            duplicate = key in seen
        except TypeError:
            continue  # unhashable; construct_mapping reports it
        if duplicate:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                f"found duplicate key {key!r}",
                key_node.start_mark,
            )
        seen[key] = key_node
    return loader.construct_mapping(node, deep=deep)


def _contract_loader(base: LoaderClass) -> LoaderClass:
    """Safe YAML with two fixes for configuration files, on ``base`` (C or pure-Python).

    Duplicate keys are errors (PyYAML silently keeps the last, which would let a second
    ``repository.protected`` entry override the first unnoticed), and only true/false are
    booleans (YAML 1.1 would read ``no`` or ``on`` as booleans).
    """
    import yaml  # noqa: PLC0415 - see loaders

    loader: LoaderClass = type(f"_Contract{base.__name__}", (base,), {"__doc__": _contract_loader.__doc__})
    loader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    loader.add_implicit_resolver(
        "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
    )
    loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)
    return loader


@functools.cache
def loaders() -> tuple[LoaderClass, LoaderClass]:
    """(the loader to use, the pure-Python loader), built at the first parse.

    YAML is imported only when a contract text is parsed: a process that gets its contract
    from the compiled cache never imports it. The loader is libyaml's (CSafeLoader) when
    PyYAML was built with it, about ten times faster than the pure-Python one, which is the
    fallback.
    """
    import yaml  # noqa: PLC0415

    pure = _contract_loader(yaml.SafeLoader)
    fast = _contract_loader(yaml.CSafeLoader) if getattr(yaml, "__with_libyaml__", False) else pure
    return fast, pure


class _Frame:
    """One open mapping or list while scanning the event stream."""

    __slots__ = ("anchor", "expanded", "expect_key", "index", "key", "mapping")

    def __init__(self, mapping: bool, anchor: str | None) -> None:
        self.mapping = mapping
        self.anchor = anchor
        self.expanded = 1
        self.expect_key = True
        self.key: str = "?"
        self.index = 0

    def step(self) -> str:
        if self.mapping:
            return self.key if not self.expect_key else "<key>"
        return f"[{self.index}]"


def _path_of(frames: list[_Frame]) -> str:
    path = ""
    for frame in frames:
        step = frame.step()
        path += step if step.startswith("[") or not path else f".{step}"
    return path


def _check_yaml_shape(text: str, source: str, loader_class: LoaderClass) -> None:
    """Refuse, before anything is built, YAML whose shape no contract has.

    One pass over the parser's events (iterative, so it cannot recurse): nesting deeper
    than MAX_CONTRACT_DEPTH (named by its field path), more than MAX_CONTRACT_ALIASES alias
    uses, a document that expands to more than MAX_CONTRACT_NODES nodes once its aliases
    are followed (the "billion laughs"), and an alias inside its own anchor. Malformed YAML
    raises the parser's error, which the caller reports with its line and column.
    """
    import yaml  # noqa: PLC0415 - see loaders

    loader = loader_class(text)
    frames: list[_Frame] = []
    sizes: dict[str, int] = {}
    open_anchors: set[str] = set()
    total = 0
    aliases = 0

    def completed(added: int, subtree: int, scalar: str | None) -> None:
        # ``added``: nodes not counted yet; ``subtree``: the finished node's expanded size.
        nonlocal total
        total += added
        if total > MAX_CONTRACT_NODES:
            where = _path_of(frames) or "the document"
            raise ContractError(
                source, _path_of(frames),
                f"the document expands to more than {MAX_CONTRACT_NODES} YAML nodes ({aliases} alias uses "
                f"so far, near {where}); a contract that large is refused, aliases included",
            )
        if frames:
            parent = frames[-1]
            parent.expanded += subtree
            if parent.mapping:
                if parent.expect_key:
                    parent.key = scalar if scalar is not None else "?"
                parent.expect_key = not parent.expect_key
            else:
                parent.index += 1

    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.AliasEvent):
                aliases += 1
                if aliases > MAX_CONTRACT_ALIASES:
                    raise ContractError(
                        source, _path_of(frames),
                        f"more than {MAX_CONTRACT_ALIASES} alias uses (*name); a contract needs far fewer",
                    )
                if event.anchor in open_anchors:
                    raise ContractError(
                        source, _path_of(frames), f"alias *{event.anchor} is inside its own anchor &{event.anchor}"
                    )
                expansion = sizes.get(event.anchor, 1) if event.anchor is not None else 1
                completed(expansion, expansion, None)
            elif isinstance(event, yaml.ScalarEvent):
                if event.anchor:
                    sizes[event.anchor] = 1
                completed(1, 1, event.value)
            elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                if len(frames) >= MAX_CONTRACT_DEPTH:
                    raise ContractError(
                        source, _path_of(frames),
                        f"nested more than {MAX_CONTRACT_DEPTH} levels deep; a contract needs far fewer",
                    )
                frames.append(_Frame(isinstance(event, yaml.MappingStartEvent), event.anchor))
                if event.anchor:
                    open_anchors.add(event.anchor)
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                frame = frames.pop()
                if frame.anchor:
                    open_anchors.discard(frame.anchor)
                    sizes[frame.anchor] = frame.expanded
                completed(1, frame.expanded, None)  # its children were counted as they ended
    finally:
        loader.dispose()


def parse_yaml(text: str, source: str, loader_class: LoaderClass | None = None) -> dict[str, Any]:
    """The top-level mapping of ``text``; one ContractError naming ``source`` (and the field path,
    where there is one) for a text too large, too deep, too aliased, malformed or not a mapping."""
    import yaml  # noqa: PLC0415 - see loaders

    fast, pure = loaders()
    loader_class = loader_class or fast
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_CONTRACT_BYTES:
        raise ContractError(
            source, "", f"the contract is {size:,} bytes; the limit is {MAX_CONTRACT_BYTES:,} bytes"
        )
    try:
        _check_yaml_shape(text, source, loader_class)
        document = yaml.load(text, Loader=loader_class)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as error:
        if "nesting depth" in str(error.problem) and loader_class is not pure:
            # libyaml stops at its own depth limit while scanning ahead, before the shape check
            # sees the levels; the pure-Python scanner reaches the check, which names the field.
            _check_yaml_shape(text, source, pure)
        mark = error.problem_mark or error.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown position"
        problem = ": ".join(part for part in (error.context, error.problem) if part)
        raise ContractError(source, "", f"malformed YAML at {where}: {problem}") from None
    except yaml.YAMLError as error:
        raise ContractError(source, "", f"malformed YAML: {error}") from None
    except RecursionError:
        raise ContractError(source, "", "nested too deeply to read") from None
    if document is None:
        raise ContractError(source, "", "the file is empty; a contract needs at least name and version")
    if not isinstance(document, dict):
        kind = type(document).__name__
        raise ContractError(source, "", f"a contract is a mapping at the top level, not a {kind}")
    return document
