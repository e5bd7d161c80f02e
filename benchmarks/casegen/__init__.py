"""The parts of benchmarks/generate_cases.py (see its docstring)."""
