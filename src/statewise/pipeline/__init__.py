"""The guard pipeline: attribution, resolution, repair, replanning and the gate."""

from statewise.pipeline.guard import STAGES, Guard, GuardConfig, report_json
from statewise.pipeline.report import (
    CandidateReport,
    Costs,
    Decision,
    GateCheck,
    GuardReport,
    PremiseReport,
    PremiseStatus,
    ProbeReport,
    RepairReport,
    Verdict,
)

__all__ = [
    "STAGES",
    "CandidateReport",
    "Costs",
    "Decision",
    "GateCheck",
    "Guard",
    "GuardConfig",
    "GuardReport",
    "PremiseReport",
    "PremiseStatus",
    "ProbeReport",
    "RepairReport",
    "Verdict",
    "report_json",
]
