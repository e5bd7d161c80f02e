"""Compatibility name: the command-rule interpreter lives in :mod:`statewise.integrations.shell.rules`."""

from statewise.integrations.shell.rules import DYNAMIC, CommandMatch, CommandProblem, CommandRules

__all__ = ["DYNAMIC", "CommandMatch", "CommandProblem", "CommandRules"]
