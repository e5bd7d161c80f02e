"""Built-in interface contracts (YAML package data); load them with statewise.contract.builtin_contract."""
