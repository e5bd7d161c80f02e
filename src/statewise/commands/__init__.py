"""From a shell command (or a file edit) an agent is about to run to normalized actions.

Claude Code's Bash tool, Codex's shell and Gemini CLI's ``run_shell_command`` hand us a
command string. :func:`analyze_command` parses it with the tree-sitter bash grammar (never
with regular expressions or ``shlex``), walks every simple command it contains — through
``&&``/``;``/``||`` lists, pipelines, subshells, braces, ``if``/``for``/``while``/``case``
bodies, function bodies, command and process substitutions, env prefixes, wrappers such as
``sudo``, ``env``, ``nohup``, ``timeout`` and ``xargs``, and ``sh -c``/``bash -lc`` bodies,
which are parsed again — and maps each one to the contract's operations (``git.push``,
``fs.delete``, ``pip.install``, ``test.run`` ...).

It fails closed. Whatever it cannot read with confidence — a parse error, a command name that
is not a static word (``$CMD``, ``$(...)``, ``$'...'``), ``eval``, a shell reading commands
from standard input, an option of a guarded command it does not know, an argument whose
value matters but is computed at run time — becomes an action with the operation
``shell.unresolved``, which no contract declares, so the gate stops it. Commands it parses
and knows to be read-only give no action; commands it parses but does not guard (``python
script.py``, ``make build``) give no action either and are listed in
:attr:`ShellAnalysis.unguarded`. See docs/shell.md.

Where a value depends on the repository (the branch a bare ``git push`` pushes), it is read
with argv-only, read-only ``git`` calls with a timeout; nothing is ever executed through a
shell here.

The package has three parts along the issue-10 seam: :mod:`.walk` (the bash-grammar walk,
with :mod:`.words` for words and options), :mod:`.wrappers` (peeling ``sudo``, ``env``,
``sh -c``, ``xargs`` ...) and the per-tool rules: the contract's ``commands:`` data, applied
by :mod:`.rules`, with :mod:`.tools` for the programs that need logic (where a bare ``git
push`` goes, pip's index settings, file paths). :mod:`.analyzer` puts them together.
"""

from statewise.commands.analyzer import analyze_command, command_disagreement, file_action, file_actions
from statewise.commands.base import DB_MIGRATE, UNRESOLVED, ShellAnalysis
from statewise.commands.tables import DEFAULT_INDEX

__all__ = ["DB_MIGRATE", "DEFAULT_INDEX", "UNRESOLVED", "ShellAnalysis", "analyze_command", "command_disagreement",
           "file_action", "file_actions"]
