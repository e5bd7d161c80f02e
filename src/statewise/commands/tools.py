"""The programs that need logic beyond a rule table, one mixin per concern.

:class:`_Tools` is what :mod:`.analyzer` composes with the walk and the wrappers; each concern
lives in its own module: :mod:`.reading` (read-only proofs, sessions), :mod:`.remote`,
:mod:`.archives`, :mod:`.unpack`, :mod:`.git`, :mod:`.files`, :mod:`.python`, :mod:`.node`, :mod:`.projects`, and
reading inside what a command runs: :mod:`.recipes`, :mod:`.scripts`, :mod:`.inline`,
:mod:`.sessions`.
"""

from __future__ import annotations

from statewise.commands.archives import _Archives, _Tar
from statewise.commands.files import _Files
from statewise.commands.git import _Git
from statewise.commands.installers import _Installers
from statewise.commands.node import _Node, _npx_call, _split_node_package
from statewise.commands.projects import _Projects
from statewise.commands.python import _Python
from statewise.commands.reading import _Reading
from statewise.commands.recipes import _Recipes
from statewise.commands.remote import _Remote
from statewise.commands.scripts import _Scripts
from statewise.commands.sessions import _Sessions
from statewise.commands.unpack import _Unpack

__all__ = ["_Tools", "_npx_call", "_split_node_package"]


class _Tools(_Git, _Node, _Python, _Projects, _Remote, _Archives, _Tar, _Unpack, _Installers, _Reading, _Files, _Recipes,
             _Scripts, _Sessions):
    """Programs that need logic beyond a rule table: git, pip, npm, file tools ..."""
