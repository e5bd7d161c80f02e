"""Installers that bypass the checked install paths (issue 25): ``easy_install``, ``setup.py
install``/``develop`` and ``pipx``.

``easy_install`` and ``setup.py install`` put packages into an interpreter without pip (no
resolver, no index settings StateWise reads, and the package's own setup code runs); ``pipx``
installs user-wide tools (their own environments, programs on the user's ``PATH``), outside the
project the contract describes. None of them is a contract operation, so each is stopped with
the reason and the checked way to do it.
"""

from __future__ import annotations

from statewise.commands.base import _Base
from statewise.commands.words import _Call

#: pipx subcommands that change what is installed (``list``, ``environment``, ``run`` ... do not;
#: ``run`` is a runner the wrappers read).
PIPX_CHANGES = frozenset({"install", "install-all", "inject", "upgrade", "upgrade-all", "upgrade-shared",
                          "reinstall", "reinstall-all", "uninstall", "uninstall-all", "uninject", "pin", "unpin"})
#: setup.py commands that install.
SETUP_INSTALLS = frozenset({"install", "develop", "easy_install"})


class _Installers(_Base):
    """easy_install, pipx, setup.py install."""

    def easy_install(self, call: _Call) -> None:
        if any(w.value in ("--version", "--help", "-h") for w in call.args) or not call.args:
            self.unguard(call.part)
            return
        self.fail("`easy_install` installs packages without pip, running each package's setup code; "
                  "install with pip (checked) instead", call.part)

    def pipx(self, call: _Call) -> None:
        sub = next((w.value for w in call.args if not (w.value or "").startswith("-")), None)
        if sub in PIPX_CHANGES:
            self.fail(f"`pipx {sub}` changes the user's tools, outside the project StateWise checks; the "
                      "developer installs user-wide tools", call.part)
            return
        if sub is None and any(w.value is None for w in call.args):
            self.fail("pipx: the subcommand is only known at run time", call.part)
            return
        self.unguard(call.part)

    def setup_py(self, call: _Call, rest: list[str | None]) -> bool:
        """``python setup.py install`` (or ``develop``): stopped; True when it was."""
        if not SETUP_INSTALLS & set(rest) and None not in rest:
            return False
        self.fail("`setup.py install` installs without pip, into whichever interpreter runs it; install with "
                  "pip install . (checked) instead", call.part)
        return True
