"""What the simulated developer reads in an approval prompt before any standing approval.

Rule 0 of the benchmark's one developer model (:mod:`statewise.bench.baselines`' docstring):
a developer reading an approval prompt declines when the prompt itself shows that the action
is not what they were told or mean, whatever standing approval they gave. It is shared by every
method: :class:`~statewise.bench.baselines.SimulatedDeveloper` (the baselines) and
:class:`ReadingApprover`, the approver the ``statewise`` and ``hook`` methods get.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from statewise.actions import Action
from statewise.clarify import ApprovalRequest, ScriptedApprover
from statewise.planners.base import read_observed

__all__ = ["ReadingApprover", "shown_contradiction"]

#: How StateWise's ask names the target a command lands in (``shell.protected_target``'s slot,
#: e.g. the production environment a configuration file places a release in).
_SHOWN_TARGET = re.compile(r'\btarget="([^"\\]+)"')


def shown_contradiction(action: Action, text: str, intent: Mapping[str, Any]) -> str | None:
    """Why a developer reading ``text`` (an approval prompt's reason) declines ``action``
    whatever its standing approval, or None.

    * a target the text says the action lands in (``target="production"``) that is neither the
      target the action states nor a word of its command: the command does not go where the
      agent says it goes (an approval of deployments is not an approval of this release to
      production);
    * a value StateWise says it evaluated (``[KEY = VALUE (evidence); ...]``,
      :func:`statewise.planners.base.read_observed`) for a key of ``intent``, other than the
      intended value (rule 3 of the model, for the facts a prompt's text states).

    Nothing else in the text is read."""
    stated = action.target
    words = str(action.args.get("command") or "")
    if stated:
        for shown in _SHOWN_TARGET.findall(text or ""):
            if shown != stated and shown not in words:
                return f"the prompt says the command goes to {shown!r}; the agent's action states {stated!r}"
    for fact in read_observed(text or "", "prompt"):
        if fact.key in intent and intent[fact.key] != fact.value:
            return f"the prompt shows {fact.key} = {fact.value!r}; the developer means {intent[fact.key]!r}"
    return None


@dataclass
class ReadingApprover(ScriptedApprover):
    """:class:`~statewise.clarify.ScriptedApprover` (standing approvals, ``allow``) that first
    reads the prompt: a request whose reason shows a contradiction (:func:`shown_contradiction`)
    is declined. ``declined`` keeps each such request with the reason."""

    intent: Mapping[str, Any] = field(default_factory=dict)
    declined: list[tuple[ApprovalRequest, str]] = field(default_factory=list)

    def approve(self, request: ApprovalRequest) -> bool:
        why = shown_contradiction(request.action, request.reason, self.intent)
        if why is not None:
            self.requests.append(request)
            self.declined.append((request, why))
            return False
        return super().approve(request)
