"""A stop on a wrong premise is continued once (issue 23 item 3).

When the agent ends its turn (Claude Code and Codex ``Stop``, Gemini CLI ``AfterAgent``) and its
last message declines or stops, citing a fact StateWise holds a corrected record for, the turn
is continued with the correction: the client's block-the-stop answer carries it as the reason.

It is careful in three ways:

* only records StateWise corrected on evidence (supersede, narrow, relocate: never one it
  cannot verify, never a developer's own edit), after the prompt-time check has run again
  (:func:`statewise.integrations.prompt.check_state`, under its deadline);
* only a message that stops (its words say it cannot, will not, or stops) and names the record:
  the key's own words (``protected`` for ``repository.protected``), and for a value that is not
  a yes/no, the old value itself (``3.9``);
* at most once per record per session, and never while the client says the stop hook is
  already continuing the turn (``stop_hook_active``): never a loop.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from statewise.contract import Contract
from statewise.integrations.hook_files import cache_dir, sha256_hex
from statewise.integrations.prompt import StateLine, check_state
from statewise.records import base_key
from statewise.store import open_store

__all__ = ["STOP_WORDS", "continue_reason", "last_message"]

#: Words by which a final message declines or stops (lower case, whole words).
STOP_WORDS = ("cannot", "can't", "can not", "won't", "unable", "not able", "stop", "stopping", "refuse",
              "not possible", "impossible", "blocked", "give up", "not allowed", "shouldn't", "should not")
_WORDS = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def last_message(data: Mapping[str, Any]) -> str:
    """The agent's final message: Codex's and Claude Code's ``last_assistant_message``, Gemini
    CLI's ``prompt_response``, else the last assistant text in Claude Code's transcript file."""
    for field in ("last_assistant_message", "prompt_response"):
        value = data.get(field)
        if isinstance(value, str) and value.strip():
            return value
    path = data.get("transcript_path")
    if not isinstance(path, str) or not path.startswith("/"):
        return ""
    text = ""
    try:
        with open(path, encoding="utf-8", errors="replace") as lines:
            for line in lines:
                text = _assistant_text(line) or text
    except OSError:
        return ""
    return text


def _assistant_text(line: str) -> str:
    try:
        entry = json.loads(line)
    except ValueError:
        return ""
    message = entry.get("message") if isinstance(entry, dict) else None
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = [part.get("text", "") for part in content or [] if isinstance(part, dict) and part.get("type") == "text"]
    return "\n".join(p for p in parts if isinstance(p, str))


def _stops(message: str) -> bool:
    text = " ".join(_WORDS.findall(message.lower()))
    return any(re.search(rf"(?<![a-z0-9']){re.escape(word)}(?![a-z0-9'])", text) for word in STOP_WORDS)


def _cites(message: str, line: StateLine) -> bool:
    words = set(_WORDS.findall(message.lower()))
    key_words = [w for w in re.split(r"[._\[\]/:-]+", base_key(line.key).lower()) if len(w) > 3]
    subject = key_words[-1] if key_words else base_key(line.key).lower()
    if subject not in words and not any(subject in w for w in words):
        return False
    if isinstance(line.old_value, bool) or line.old_value is None:
        return True
    return str(line.old_value).lower() in message.lower()


def _told_path(workspace: Path, agent: str, session_id: str) -> Path:
    name = sha256_hex(f"stop\0{workspace}\0{agent}\0{session_id}".encode())[:32]
    return cache_dir() / "told" / f"{name}.json"


def continue_reason(workspace: Path, data: Mapping[str, Any], *, store_location: str, contract: Contract,
                    agent: str) -> str:
    """The correction to continue the turn with, or "" to let the agent stop."""
    if data.get("stop_hook_active") is True:
        return ""  # already continued once: never a loop
    message = last_message(data)
    if not message or not _stops(message):
        return ""
    if "://" not in store_location and not Path(store_location).exists():
        return ""
    store = open_store(store_location, key_schema=contract)
    try:
        lines = [line for line in check_state(workspace, store, contract, prompt=message)
                 if line.kind == "corrected" and _cites(message, line)]
    finally:
        store.close()
    session = str(data.get("session_id") or "")
    path = _told_path(workspace, agent, session)
    told: set[str] = set()
    if session:
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
            told = {str(item) for item in loaded} if isinstance(loaded, list) else set()
        except (OSError, ValueError):
            told = set()
    fresh = [line for line in lines if line.identity not in told]
    if not fresh:
        return ""
    if session:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(sorted(told | {line.identity for line in fresh})), encoding="utf-8")
        except OSError:
            pass
    facts = "; ".join(f"{line.key} in {line.scope} was {json.dumps(line.old_value, default=str)}, now "
                      f"{json.dumps(line.value, default=str)} ({line.why})" for line in fresh)
    return (f"StateWise: your last message stops on a fact it has corrected on evidence: {facts}. If your stop "
            "rests on the old value, continue the task from the corrected one; if it does not, end the turn again.")
