"""The executable benchmark (paper section 5): cases, sandboxes, methods, runner, metrics.

``run_bench()`` runs case sets from ``benchmarks/cases/`` in real sandboxes and returns a
:class:`BenchResult`; ``load_case``/``load_cases`` read the case format (docs/cases.md);
``register_method`` adds a method (a baseline) the runner can compare.
"""

from statewise.bench.case import (
    Case,
    CaseError,
    CaseSet,
    Scenario,
    SequenceCase,
    case_schema,
    load_case,
    load_cases,
)
from statewise.bench.checks import CHECKS
from statewise.bench.methods import METHODS, Method, MethodInput, MethodResult, register_method
from statewise.bench.metrics import aggregate, plot_data
from statewise.bench.runner import BenchResult, Episode, run_bench, run_episode, run_scenario_once

__all__ = [
    "CHECKS",
    "METHODS",
    "BenchResult",
    "Case",
    "CaseError",
    "CaseSet",
    "Episode",
    "Method",
    "MethodInput",
    "MethodResult",
    "Scenario",
    "SequenceCase",
    "aggregate",
    "case_schema",
    "load_case",
    "load_cases",
    "plot_data",
    "register_method",
    "run_bench",
    "run_episode",
    "run_scenario_once",
]
