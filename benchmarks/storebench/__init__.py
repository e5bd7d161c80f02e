"""The parts of benchmarks/store_speed.py (see its docstring)."""
