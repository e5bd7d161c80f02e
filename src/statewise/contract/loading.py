"""Loading: a file, a text or a built-in name, with ``extends:``, into a validated Contract."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from statewise.contract.cache import cache_directory, cache_key, cache_read, cache_write, expression_texts
from statewise.contract.merge import document_parts, merge_parts
from statewise.contract.model import Contract, assemble
from statewise.contract.safe_yaml import parse_yaml
from statewise.contract.spec import ContractDocument
from statewise.contract.validation import contract_error_from
from statewise.errors import ContractError, InputTooLargeError
from statewise.limits import MAX_CONTRACT_BYTES, read_capped


def _validated_document(text: str, source: str) -> tuple[ContractDocument, str | None, bool]:
    """(document, cache key, from the cache). Raises ContractError for invalid text."""
    key = cache_key(text) if cache_directory() is not None else None
    if key is not None:
        cached = cache_read(key)
        if cached is not None:
            return cached, key, True
    raw = parse_yaml(text, source)
    try:
        document = ContractDocument.model_validate(raw)
    except ValidationError as error:
        raise contract_error_from(error, source) from None
    except RecursionError:
        raise ContractError(source, "", "nested too deeply to validate") from None
    return document, key, False


def _load(text: str, source: str, base_dir: Path | None, seen: frozenset[str]) -> Contract:
    document, key, cached = _validated_document(text, source)
    # A cached document's expressions compiled when it was stored; they compile lazily now.
    validated = expression_texts(document) if cached else frozenset()
    parts = document_parts(document)
    if document.extends is None:
        contract = assemble(
            name=document.name, version=document.version, description=document.description,
            source=source, bases=(), parts=parts, validated=validated,
        )
    else:
        base = _resolve_extends(document.extends, source, base_dir, seen)
        merged = merge_parts(base._parts, base.source, parts, source)
        contract = assemble(
            name=document.name,
            version=document.version,
            description=document.description,
            source=source,
            bases=base.bases + (base.name,),
            parts=merged,
            compiled=base._compiled,
            validated=validated,
        )
    if key is not None and not cached:
        cache_write(key, document)
    return contract


def _resolve_extends(target: str, source: str, base_dir: Path | None, seen: frozenset[str]) -> Contract:
    if not target.endswith((".yaml", ".yml")):
        if target in list_builtin_contracts():
            return builtin_contract(target)
        raise ContractError(
            source,
            "extends",
            f"{target!r} is neither a built-in contract ({', '.join(list_builtin_contracts())}) "
            "nor a .yaml/.yml file",
        )
    path = Path(target)
    if not path.is_absolute():
        path = (base_dir or Path.cwd()) / path
    resolved = str(path.resolve())
    if resolved in seen:
        raise ContractError(source, "extends", f"{target!r} extends itself (directly or through other files)")
    text = _read_contract_file(path, source, "extends")
    return _load(text, str(path), path.parent, seen | {resolved})


def load_contract(path: str | os.PathLike[str]) -> Contract:
    """Load and validate a contract file; with ``extends:`` return the merged contract.

    Raises ContractError (file, field path, what was expected) for anything invalid,
    including unreadable files and malformed YAML.
    """
    file = Path(path)
    text = _read_contract_file(file, str(file), "")
    return _load(text, str(file), file.parent, frozenset({str(file.resolve())}))


def _read_contract_file(file: Path, source: str, field: str) -> str:
    """The file's text; ContractError (naming ``source`` and ``field``) if it cannot be read,
    is larger than MAX_CONTRACT_BYTES (refused before reading it all) or is not UTF-8."""
    what = "the contract" if not field else repr(str(file))
    try:
        data = read_capped(file, MAX_CONTRACT_BYTES, "a contract")
    except InputTooLargeError as error:
        raise ContractError(source, field, f"{what} is {error.problem}") from None
    except OSError as error:
        raise ContractError(source, field, f"cannot read {what}: {error.strerror or error}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ContractError(source, field, f"{what} is not UTF-8 text: {error}") from None


def load_contract_text(
    text: str,
    source: str = "<contract>",
    *,
    base_dir: str | os.PathLike[str] | None = None,
) -> Contract:
    """Load and validate a contract from YAML text; ``source`` names it in errors.

    A relative ``extends:`` path is resolved against ``base_dir`` (default: the current
    directory); a bare name such as ``coding`` is a built-in contract.
    """
    return _load(text, source, Path(base_dir) if base_dir is not None else None, frozenset())


_BUILTIN_PACKAGE = "statewise.contracts"


def _builtin_folder() -> Any:
    # The package's own directory when installed as files (the usual case, and cheap);
    # importlib.resources otherwise (a zip, say).
    folder = Path(__file__).parent.parent / "contracts"
    if folder.is_dir():
        return folder
    import importlib.resources  # noqa: PLC0415

    return importlib.resources.files(_BUILTIN_PACKAGE)


def list_builtin_contracts() -> list[str]:
    """Names of the contracts shipped with StateWise (e.g. ``["coding"]``)."""
    folder = _builtin_folder()
    return sorted(entry.name[: -len(".yaml")] for entry in folder.iterdir() if entry.name.endswith(".yaml"))


def builtin_contract(name: str = "coding") -> Contract:
    """A built-in contract by name, loaded once and cached (contracts are immutable)."""
    return _builtin_contract(name)


@functools.cache
def _builtin_contract(name: str) -> Contract:
    if name not in list_builtin_contracts():
        raise ContractError(
            f"builtin:{name}",
            "",
            f"no built-in contract named {name!r}; available: {', '.join(list_builtin_contracts())}",
        )
    resource = _builtin_folder() / f"{name}.yaml"
    source = f"statewise/contracts/{name}.yaml"
    if name not in BUILTIN_PARTS:
        return _load(resource.read_text(encoding="utf-8"), source, None, frozenset())
    # The base file and its part files (the contract's sections and its command catalogue) are
    # merged with the same rules as ``extends:``, so a part cannot redefine what the base or
    # another part declares. The merged document is cached as one entry, keyed by every file's
    # path and text.
    texts = [(f"{name}.yaml", resource.read_text(encoding="utf-8")), *builtin_part_texts(name)]
    key = cache_key("\0".join(f"{file}\0{text}" for file, text in texts)) if cache_directory() is not None else None
    cached = cache_read(key) if key is not None else None
    if cached is not None:
        return assemble(name=cached.name, version=cached.version, description=cached.description, source=source,
                        bases=(), parts=document_parts(cached), validated=expression_texts(cached))
    document = _parsed_document(texts[0][1], source)
    parts = document_parts(document)
    for part_file, text in texts[1:]:
        part_source = f"statewise/contracts/{part_file}"
        parts = merge_parts(parts, source, document_parts(_parsed_document(text, part_source)), part_source)
    contract = assemble(name=document.name, version=document.version, description=document.description,
                        source=source, bases=(), parts=parts)
    if key is not None:
        merged = ContractDocument.model_construct(
            name=document.name, version=document.version, description=document.description, extends=None,
            state=parts.state, operations=parts.operations, invariants=tuple(parts.invariants),
            verifiers=parts.verifiers, scopes=parts.scopes, observations=tuple(parts.observations),
            memory=parts.memory, commands=parts.commands, secrets=parts.secrets)
        cache_write(key, merged)
    return contract


def _parsed_document(text: str, source: str) -> ContractDocument:
    """One file's validated document, parsed (never from the cache)."""
    raw = parse_yaml(text, source)
    try:
        return ContractDocument.model_validate(raw)
    except ValidationError as error:
        raise contract_error_from(error, source) from None


#: Built-in contracts assembled from more than one file: the contract's name -> the folders (next
#: to its YAML file) whose ``*.yaml`` files are merged into it, folder by folder in this order and
#: in name order within a folder. ``coding``'s sections are in ``coding/`` (state, operations,
#: commands, invariants, memory, observations) and its command catalogue (publishing,
#: infrastructure, databases, remote execution ...) in ``catalogue/``, one file per family, as
#: contract data (docs/contracts.md, "The built-in contract's files"). The hook's digest reads
#: the same folders (statewise.integrations.hook_files.BUILTIN_PART_FOLDERS; a test keeps the two
#: equal).
BUILTIN_PARTS: dict[str, tuple[str, ...]] = {"coding": ("coding", "catalogue")}


def builtin_part_texts(name: str) -> list[tuple[str, str]]:
    """The part files of built-in contract ``name`` as (path under the contracts folder, text):
    the folders :data:`BUILTIN_PARTS` names in its order, each folder's ``*.yaml`` files in name
    order."""
    texts = []
    for folder in BUILTIN_PARTS.get(name, ()):
        directory = _builtin_folder() / folder
        try:
            files = sorted((entry for entry in directory.iterdir() if entry.name.endswith(".yaml")),
                           key=lambda e: e.name)
            texts += [(f"{folder}/{entry.name}", entry.read_text(encoding="utf-8")) for entry in files]
        except OSError as error:
            # An installation missing a part would load a contract without its rules: refused.
            raise ContractError(f"statewise/contracts/{folder}/", "",
                                f"cannot read the built-in contract's part files: {error}") from None
    return texts
