"""Golden values: every online policy family's makespan and total completion
time on every bundled instance (issue 28).

One table, recomputed from the schedules (maximum end, sum of ends; weights
one, as ``optsched gap`` prints ``cmax`` and ``wct:one``); each schedule
goes through the checker. ``None``: the policy refuses the instance
(``ValueError``; the refusals' wording is pinned by the snapshots).

How the values were checked:

- ``kth_20``/``default`` (byte-identical), ``fcfs``: makespan 51,488 by
  hand. The three 80-processor jobs 2821-2823 (releases 2,832-2,868) run one
  after the other: 2821 waits for 2815 (12 processors) to end at 3,580
  (2819 and 2820 hold 13 then), 2822 starts at 17,597, 2823 at 31,735 and
  runs 19,493 s (past its 14,400 s estimate) to 51,228. Then 2830 (42) and
  2831 (41) start at 51,228; 2832 (43) when 2831 ends (51,296); 2833 (36)
  when 2830 ends (51,317); 2834 (44) when 2832 ends (51,378), ending at
  51,378 + 110 = 51,488.
- ``conservative`` on the same window (issue 28's rule; traced pass by
  pass): from 46,135 (2823's estimated end) every pass finds the due
  reservations blocked by 2823's overrun, so they are void and placed
  again. At 51,228 (2823 ends) 2830 and 2831, due at 50,635, are void;
  placed first (queue order) around the valid ones, they land at 52,435
  and 53,335, while the valid 2832 and 2834 (51,535) move to 51,228 and
  start (87 processors) and 2833 moves to 52,128. 2832 ends early at
  51,310: 2830 moves there and starts; 2834 ends at 51,338: 2833 starts;
  2830 ends at 51,399: 2831 starts and ends at 51,467 = the makespan (was
  51,509); total completion 407,812 (was 407,929).
- ``conservative`` with ``--kill-at-estimate`` on the same window
  (``KILLED``): 2823 is stopped at its estimated end, 46,135, where 2830
  (42) and 2831 (41), reserved there, start; 2831 ends at 46,203 and 2832
  (43) starts; 2830 ends at 46,224 and 2833 (36) starts; 2832 ends at
  46,285 and 2834 (44) starts and ends at 46,395 = the makespan (no
  reservation is void: every job ends by its estimate).
- Every engine row (strict orders, firstfit, EASY, depth 3, conservative,
  Best Package), the combinators and ``strict-backfill`` equal the plain
  references of ``support.oracle`` job for job
  (``test_reference_policies.py``), with and without kills.
"""

from __future__ import annotations

from functools import cache

import pytest
from support.paths import INSTANCES
from support.simulation import simulated

from optsched.heuristics import simulate
from optsched.instance import Instance
from optsched.io import read
from optsched.moldable.speedup import parse_model

GOLDEN: dict[str, dict[str, tuple[int, int] | None]] = {
    "hpc2n_40.json": {
        "fcfs": (65703, 909597),
        "spt": (63761, 902792),
        "lpt:oracle": (57918, 968961),
        "firstfit": (57918, 898734),
        "easy": (61176, 903951),
        "easy-sjbf": (66054, 889788),
        "backfill:depth=3": (65748, 892279),
        "conservative": (65293, 895592),
        "conservative:oracle": (65077, 891056),
        "best-package": (57918, 878067),
        "mallmann": (57918, 898734),
        "strict-backfill": (65913, 901646),
        "nfdh": (109732, 2592347),
        "ffdh": (109270, 2590309),
        "smart": (112122, 1529309),
        "pc2": (120945, 1356747),
        "pbi": (119585, 1384605),
        "psrs": (86533, 1216935),
        "gang": (62054, 748704),
        "rescale": (119585, 1384605),
        "adaptive": (65703, 909597),
        "easy-scaling": (61176, 903951),
        "blocking:f=fifo": (65703, 909597),
        "fit:f=fifo": (57918, 898734),
        "optimistic:f=fifo": (61176, 903951),
        "afkt-backfill:f=fifo": (65913, 901646),
        "orig": (94805, 1302395),
    },
    "kth_20.json": {
        "fcfs": (51488, 575829),
        "spt": (51488, 238457),
        "lpt:oracle": (51462, 676407),
        "firstfit": (51488, 406092),
        "easy": (51488, 407756),
        "easy-sjbf": (51488, 407756),
        "backfill:depth=3": (51488, 407756),
        "conservative": (51467, 407812),
        "conservative:oracle": (51488, 406092),
        "best-package": (51462, 238461),
        "mallmann": (51488, 406092),
        "strict-backfill": (51488, 408282),
        "nfdh": (54183, 865609),
        "ffdh": (51509, 602670),
        "smart": (54341, 606346),
        "pc2": (61344, 371274),
        "pbi": (52986, 580041),
        "psrs": (52986, 617529),
        "gang": (61116, 292020),
        "rescale": (52986, 580041),
        "adaptive": (51488, 575829),
        "easy-scaling": (51488, 407756),
        "blocking:f=fifo": (51488, 575829),
        "fit:f=fifo": (51488, 406092),
        "optimistic:f=fifo": (51488, 407756),
        "afkt-backfill:f=fifo": (51488, 408282),
        "orig": (448721, 1087326),
    },
    "kth_20_recorded.json": {
        "fcfs": (102035, 1083988),
        "spt": (102035, 1068761),
        "lpt:oracle": (102035, 1085117),
        "firstfit": (102035, 1065348),
        "easy": (102035, 1068761),
        "easy-sjbf": (102035, 1068761),
        "backfill:depth=3": (102035, 1068761),
        "conservative": (102035, 1068761),
        "conservative:oracle": (102035, 1068761),
        "best-package": (102035, 1065348),
        "mallmann": (102035, 1065348),
        "strict-backfill": (102035, 1068761),
        "nfdh": (148993, 1936818),
        "ffdh": (148993, 1936818),
        "smart": (178743, 2202510),
        "pc2": (151700, 1147906),
        "pbi": None,
        "psrs": None,
        "gang": (102035, 1180734),
        "rescale": None,
        "adaptive": (102035, 1083988),  # fcfs's: rigid jobs, on the engine
        "easy-scaling": (102035, 1068761),  # easy's
        "blocking:f=fifo": None,
        "fit:f=fifo": None,
        "optimistic:f=fifo": None,
        "afkt-backfill:f=fifo": None,
        "orig": None,
    },
    "kth_50.json": {
        "fcfs": (98583, 3382282),
        "spt": (98561, 885823),
        "lpt:oracle": (80854, 3679796),
        "firstfit": (71989, 738640),
        "easy": (71989, 738640),
        "easy-sjbf": (71989, 738483),
        "backfill:depth=3": (71989, 738640),
        "conservative": (71989, 738366),
        "conservative:oracle": (71989, 738366),
        "best-package": (71989, 738640),
        "mallmann": (71989, 738640),
        "strict-backfill": (71989, 738640),
        "nfdh": (117787, 5490227),
        "ffdh": (117755, 4881125),
        "smart": (129577, 2149670),
        "pc2": (80307, 1103430),
        "pbi": (95522, 1966697),
        "psrs": (103749, 1977547),
        "gang": (86809, 969767),
        "rescale": (95522, 1966697),
        "adaptive": (98583, 3382282),
        "easy-scaling": (71989, 738640),
        "blocking:f=fifo": (98583, 3382282),
        "fit:f=fifo": (71989, 738640),
        "optimistic:f=fifo": (71989, 738640),
        "afkt-backfill:f=fifo": (71989, 738640),
        "orig": (382758, 2732351),
    },
    "lublin256_30.json": {
        "fcfs": (54532, 753362),
        "spt": (48497, 241539),
        "lpt:oracle": (48326, 897944),
        "firstfit": (42631, 233590),
        "easy": (46872, 248499),
        "easy-sjbf": (46872, 247116),
        "backfill:depth=3": (46872, 248499),
        "conservative": (46872, 248499),
        "conservative:oracle": (46872, 248499),
        "best-package": (42631, 233587),
        "mallmann": (42631, 233590),
        "strict-backfill": (54373, 219639),
        "nfdh": (48518, 948032),
        "ffdh": (42715, 601109),
        "smart": (50406, 313483),
        "pc2": (54445, 226891),
        "pbi": (42715, 284980),
        "psrs": (42715, 414142),
        "gang": None,
        "rescale": (42715, 284980),
        "adaptive": (54532, 753362),
        "easy-scaling": (46872, 248499),
        "blocking:f=fifo": (54532, 753362),
        "fit:f=fifo": (42631, 233590),
        "optimistic:f=fifo": (46872, 248499),
        "afkt-backfill:f=fifo": (54373, 219639),
        "orig": None,
    },
}
"""Instance file -> policy spec -> (makespan, total completion time)."""
GOLDEN["default.json"] = GOLDEN["kth_20.json"]  # the same file, byte for byte

KILLED: dict[str, dict[str, tuple[int, int]]] = {
    "hpc2n_40.json": {
        "fcfs": (65543, 908874),
        "firstfit": (57840, 898443),
        "easy": (61098, 903464),
        "backfill:depth=3": (65660, 891948),
        "conservative": (65156, 892592),
        "conservative:oracle": (64917, 890579),
        "best-package": (57840, 877826),
    },
    "kth_20.json": {
        "fcfs": (46395, 544397),
        "firstfit": (46395, 374660),
        "easy": (46395, 375450),
        "backfill:depth=3": (46395, 375450),
        "conservative": (46395, 375450),
        "conservative:oracle": (46395, 374660),
        "best-package": (46369, 232494),
    },
    "kth_20_recorded.json": {
        "fcfs": (102035, 1083988),
        "firstfit": (102035, 1065348),
        "easy": (102035, 1068761),
        "backfill:depth=3": (102035, 1068761),
        "conservative": (102035, 1068761),
        "conservative:oracle": (102035, 1068761),
        "best-package": (102035, 1065348),
    },
    "kth_50.json": {
        "fcfs": (98583, 3382282),
        "firstfit": (71989, 738640),
        "easy": (71989, 738640),
        "backfill:depth=3": (71989, 738640),
        "conservative": (71989, 738366),
        "conservative:oracle": (71989, 738366),
        "best-package": (71989, 738640),
    },
    "lublin256_30.json": {
        "fcfs": (54532, 753362),
        "firstfit": (42631, 233590),
        "easy": (46872, 248499),
        "backfill:depth=3": (46872, 248499),
        "conservative": (46872, 248499),
        "conservative:oracle": (46872, 248499),
        "best-package": (42631, 233587),
    },
}
"""The engine policies with ``--kill-at-estimate`` (every job stopped at
its requested time): instance file -> spec -> (makespan, total completion
time). Conservative's three settings (overruns above, ``oracle``, kills
here) are all pinned; the killed schedules are valid, not upper bounds."""
KILLED["default.json"] = KILLED["kth_20.json"]

DEQ_MALLEABLE_KTH_20 = (42626, 187423)
"""DEQ on ``kth_20`` with every job malleable under linear speed-up (DEQ
reallocates running jobs, so it refuses rigid ones)."""


@cache
def _instance(name: str) -> Instance:
    return read(INSTANCES / name)


def _values(instance: Instance, spec: str, kill: bool = False) -> tuple[int, int]:
    schedule = simulated(instance, spec, kill_at_estimate=kill).schedule
    ends = [p.end for p in schedule.placements.values()]
    return max(ends), sum(ends)


def test_the_tables_cover_every_bundled_instance() -> None:
    bundled = sorted(p.name for p in INSTANCES.glob("*.json"))
    assert sorted(GOLDEN) == bundled
    assert sorted(KILLED) == bundled


@pytest.mark.parametrize(
    ("name", "spec"), [(n, s) for n, row in GOLDEN.items() for s in row]
)
def test_golden_value(name: str, spec: str) -> None:
    expected = GOLDEN[name][spec]
    instance = _instance(name)
    if expected is None:
        with pytest.raises(ValueError):
            simulate(instance, spec)
    else:
        assert _values(instance, spec) == expected


@pytest.mark.parametrize(
    ("name", "spec"), [(n, s) for n, row in KILLED.items() for s in row]
)
def test_golden_value_killed_at_the_estimate(name: str, spec: str) -> None:
    assert _values(_instance(name), spec, kill=True) == KILLED[name][spec]


def test_deq_on_malleable_jobs() -> None:
    instance = parse_model("linear").apply(_instance("kth_20.json"), malleable=True)
    assert _values(instance, "deq") == DEQ_MALLEABLE_KTH_20
