"""optsched: how far HPC scheduling policies are from optimal.

Reads workload traces, cuts them into windows, computes optimal or provably
bounded schedules, simulates online policies and reports competitive gaps.
"""

from optsched.check import Violation, check_schedule
from optsched.errors import InputError
from optsched.instance import BusyBlock, Instance, Job, Machine, Source, Window
from optsched.schedule import Placement, Schedule

__version__ = "0.1.0"

__all__ = [
    "BusyBlock",
    "InputError",
    "Instance",
    "Job",
    "Machine",
    "Placement",
    "Schedule",
    "Source",
    "Violation",
    "Window",
    "__version__",
    "check_schedule",
]
