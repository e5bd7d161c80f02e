"""Built-in interface contracts (YAML package data); load them with statewise.contract.builtin_contract.

A built-in contract is ``NAME.yaml`` in this folder, merged with the ``*.yaml`` files of each
folder :data:`BUILTIN_PARTS` names for it (docs/contracts.md, "The built-in contract's files").
The table is here, with the data and in the standard library only, because two readers need
it: the contract loader (statewise.contract.loading) and the hook's digest of the contract's
files (statewise.integrations.hook_files), which must not import the loader.
"""

#: Built-in contracts assembled from more than one file: the contract's name -> the folders (next
#: to its YAML file) whose ``*.yaml`` files are merged into it, folder by folder in this order and
#: in name order within a folder. ``coding``'s sections are in ``coding/`` (state, operations,
#: commands, invariants, memory, observations) and its command catalogue (publishing,
#: infrastructure, databases, remote execution ...) in ``catalogue/``, one file per family.
BUILTIN_PARTS: dict[str, tuple[str, ...]] = {"coding": ("coding", "catalogue")}
