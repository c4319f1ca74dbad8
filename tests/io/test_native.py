"""Native JSON instance files: golden files, round trips, schema, errors."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from support import paths
from support.refusals import refusal

from optsched.errors import InputError
from optsched.instance import BusyBlock, Instance, Job, Machine, Source, Window
from optsched.io import detect_format, read
from optsched.io.native import (
    instance_from_dict,
    instance_to_dict,
    instance_to_json,
    read_native,
    schema_path,
    write_native,
)
from optsched.moldable.speedup import parse_model

DATA = paths.DATA / "json"

TINY = Instance(
    Machine(4, "any", (BusyBlock(0, 30, 2, label="job 7"),)),
    (Job(1, 0, 2, 10, 20), Job(2, 5, 4, 3, weight=2.0, user=12)),
    "tiny",
    Source(
        "KTH-SP2-1996-2.1-cln.swf",
        "fba36494c4e4257f72182e8b629ebb0bcb054b3b82851ef957445bd627adcc87",
        "swf",
        Window(first_job=100, jobs=2, shift=8210),
    ),
)


# --------------------------------------------------------------------------
# Golden files
# --------------------------------------------------------------------------


def test_writer_output_is_the_golden_file(tmp_path: Path) -> None:
    out = tmp_path / "tiny.json"
    write_native(TINY, out)
    assert out.read_text(encoding="utf-8") == (DATA / "tiny.json").read_text()


def test_golden_file_reads_to_the_instance() -> None:
    trace = read_native(DATA / "tiny.json")
    assert trace.instance == TINY
    assert trace.records == 2
    assert trace.header == {"format": "optsched-instance", "version": "1"}


def test_handwritten_file_uses_defaults_and_records_itself_as_source() -> None:
    path = DATA / "handwritten.json"
    instance = read_native(path).instance
    assert instance.machine == Machine(8, "any", ())
    assert instance.jobs == (
        Job(10, 0, 8, 100, 100, 1.0),
        Job(11, 20, 3, 50, 60, 2.5),
    )
    assert instance.name == ""
    assert instance.source.file == str(path)
    assert instance.source.format == "json"
    import hashlib

    assert instance.source.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert instance.source.window is None


def test_contiguous_example_keeps_blocks_and_swf_extras() -> None:
    instance = read_native(DATA / "contiguous.json").instance
    assert instance.machine.allocation == "contiguous"
    assert instance.machine.unavailable == (
        BusyBlock(0, 5, 4, 0, "downtime"),
        BusyBlock(0, 8, 2, 8, ""),
    )
    job3 = instance.job(3)
    assert (job3.wait, job3.user, job3.group, job3.executable) == (4, 1, 2, 3)
    assert (job3.queue, job3.partition, job3.status) == (1, 1, 1)
    assert (job3.preceding_job, job3.think_time) == (1, 30)
    assert instance.source == Source()


def test_none_extras_are_omitted_and_present_ones_kept() -> None:
    data = instance_to_dict(TINY)
    assert data["jobs"][0] == {
        "id": 1,
        "release": 0,
        "size": 2,
        "runtime": 10,
        "estimate": 20,
        "weight": 1.0,
    }
    assert data["jobs"][1]["user"] == 12
    assert "wait" not in data["jobs"][1]


def test_read_entry_point_recognises_json() -> None:
    assert detect_format(DATA / "tiny.json") == "json"
    assert read(DATA / "tiny.json") == TINY


def test_one_job_per_line() -> None:
    lines = instance_to_json(TINY).splitlines()
    assert sum('"id": ' in line for line in lines) == 2


def test_real_window_with_recorded_busy_blocks_round_trips(tmp_path: Path) -> None:
    from support.paths import trace_path

    from optsched.io import read_trace
    from optsched.windows.window import cut_window

    trace = read_trace(trace_path("KTH-SP2-1996-2.1-cln.swf"))
    window = cut_window(trace, first_job=5000, jobs=300, initial_state="recorded")
    assert window.machine.unavailable, "expected jobs running at the window start"
    write_native(window, tmp_path / "window.json")
    assert read_native(tmp_path / "window.json").instance == window


# --------------------------------------------------------------------------
# Round trip (hypothesis)
# --------------------------------------------------------------------------

optional_int = st.none() | st.integers(-1, 10**6)


@st.composite
def machines(draw: st.DrawFn) -> Machine:
    allocation = draw(st.sampled_from(["any", "contiguous"]))
    m = draw(st.integers(1, 64))
    # Blocks on disjoint processor slices never overrun capacity.
    sizes = draw(st.lists(st.integers(1, 8), max_size=4))
    blocks, offset = [], 0
    for size in sizes:
        if offset + size > m:
            break
        start = draw(st.integers(0, 1000))
        end = start + draw(st.integers(0, 1000))
        # Offsets on contiguous machines only: blocks are counts on "any" ones.
        keep_offset = allocation == "contiguous"
        label = draw(st.text(max_size=8))
        blocks.append(
            BusyBlock(start, end, size, offset if keep_offset else None, label)
        )
        offset += size
    return Machine(m, allocation, tuple(blocks))


def _moldable(draw: st.DrawFn, job: Job, m: int) -> Job:
    """``job`` made moldable under a drawn speed-up model (maybe malleable)."""
    spec = draw(
        st.sampled_from(["linear", "conservative", "amdahl:f=0.1", "linear:max=64"])
    )
    modes = parse_model(spec).modes(job, min(m, 64))
    return job.replace(modes=modes, malleable=draw(st.booleans()))


@st.composite
def instances(draw: st.DrawFn) -> Instance:
    machine = draw(machines())
    ids = draw(st.lists(st.integers(-(10**9), 10**9), unique=True, max_size=12))
    jobs = []
    for job_id in ids:
        runtime = draw(st.integers(0, 10**7))
        jobs.append(
            Job(
                job_id,
                draw(st.integers(0, 10**9)),
                draw(st.integers(1, machine.processors)),
                runtime,
                draw(st.none() | st.integers(0, 10**7)),
                draw(
                    st.floats(1e-9, 1e9, allow_nan=False, allow_infinity=False)
                    | st.integers(1, 100)
                ),
                *(draw(optional_int) for _ in range(9)),
            )
        )
        if draw(st.booleans()):
            jobs[-1] = _moldable(draw, jobs[-1], machine.processors)
    window = draw(
        st.none()
        | st.builds(
            Window,
            first_job=st.none() | st.integers(0, 10**6),
            jobs=st.none() | st.integers(1, 10**6),
            start=st.none() | st.integers(0, 10**9),
            end=st.none() | st.integers(0, 10**9),
            shift=st.integers(0, 10**9),
            initial_state=st.sampled_from(["none", "recorded"]),
        )
    )
    source = Source(
        draw(st.none() | st.text(max_size=20)),
        draw(st.none() | st.text("0123456789abcdef", min_size=64, max_size=64)),
        draw(st.none() | st.sampled_from(["swf", "json", "strip"])),
        window,
    )
    return Instance(machine, tuple(jobs), draw(st.text(max_size=20)), source)


@settings(max_examples=60, deadline=None)
@given(instances())
def test_file_round_trip_is_exact(tmp_path_factory: Any, instance: Instance) -> None:
    path = tmp_path_factory.mktemp("rt") / "instance.json"
    write_native(instance, path)
    again = read_native(path).instance
    assert again == instance
    # Field types survive too (an int weight stays int, a float stays float).
    assert [type(j.weight) for j in again.jobs] == [
        type(j.weight) for j in instance.jobs
    ]


@settings(max_examples=60, deadline=None)
@given(instances())
def test_dict_round_trip_and_schema(instance: Instance) -> None:
    data = instance_to_dict(instance)
    assert instance_from_dict(json.loads(json.dumps(data))) == instance
    assert schema_errors(data) == []


# --------------------------------------------------------------------------
# The bundled JSON Schema, checked with jsonschema (the reference validator)
# --------------------------------------------------------------------------

SCHEMA = json.loads(schema_path().read_text(encoding="utf-8"))
VALIDATOR = Draft202012Validator(SCHEMA)


def schema_errors(value: Any) -> list[str]:
    """Every error jsonschema finds in ``value``: ``JSON path: keyword``."""
    return [f"{e.json_path}: {e.validator}" for e in VALIDATOR.iter_errors(value)]


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    # Its fields against the core types, and every instance file of the
    # repository against it: tests/io/test_native_schema.py.
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d["jobs"][0].update(size=-2), "$.jobs[0].size: minimum"),
        (
            lambda d: d["jobs"][0].update(runtme=5),
            "$.jobs[0]: additionalProperties",
        ),
        (lambda d: d["jobs"][1].pop("runtime"), "$.jobs[1]: required"),
        (
            lambda d: (
                d["jobs"][1].pop("estimate"),
                d["jobs"][1].update(modes=[{"processors": 1, "runtime": 2}]),
            ),
            "$.jobs[1].runtime: not",
        ),
        (
            lambda d: d["jobs"].__setitem__(
                0, {"id": 1, "release": 0, "modes": [{"processors": 0, "runtime": 2}]}
            ),
            "$.jobs[0].modes[0].processors: minimum",
        ),
        (lambda d: d["machine"].update(allocation="x"), "$.machine.allocation: enum"),
        (lambda d: d.update(version=2), "$.version: const"),
        # Issue 17: the limits of the core types (2**53, weight 1e12).
        (
            lambda d: d["jobs"][0].update(release=2**53 + 1),
            "$.jobs[0].release: maximum",
        ),
        (lambda d: d["jobs"][1].update(weight=1e13), "$.jobs[1].weight: maximum"),
        (lambda d: d["jobs"][1].update(user=-(2**63)), "$.jobs[1].user: minimum"),
        (
            lambda d: d["machine"].update(processors=2**60),
            "$.machine.processors: maximum",
        ),
        (
            lambda d: d["machine"]["unavailable"][0].update(end=2**60),
            "$.machine.unavailable[0].end: maximum",
        ),
    ],
)
def test_schema_rejects_what_the_reader_rejects(change: Any, expected: str) -> None:
    # A job's form (rigid or moldable) is chosen by if/then/else on its keys,
    # so a problem is named at the field, not as "no form matches".
    data = instance_to_dict(TINY)
    change(data)
    assert schema_errors(data) == [expected]
    with pytest.raises(InputError):
        instance_from_dict(data)


# --------------------------------------------------------------------------
# Errors: file:line: where: reason
# --------------------------------------------------------------------------

HEADER = '{\n  "version": 1,\n  "machine": {"processors": 128},\n  "jobs": [\n'
# Jobs start on line 5.


def _jobs_file(tmp_path: Path, *jobs: str) -> Path:
    path = tmp_path / "inst.json"
    path.write_text(HEADER + ",\n".join(f"    {j}" for j in jobs) + "\n  ]\n}\n")
    return path


def _error(path: Path) -> str:
    return refusal(read_native, path)


def _job(job_id: int, size: int = 1, **extra: object) -> str:
    fields = {"id": job_id, "release": 0, "size": size, "runtime": 10, **extra}
    return json.dumps(fields)


def test_job_larger_than_machine_names_file_line_and_job(tmp_path: Path) -> None:
    path = _jobs_file(tmp_path, _job(1), _job(2), _job(3), _job(17, size=130))
    assert _error(path) == (
        f"{path}:8: jobs[3] (id 17): size 130 exceeds machine processors 128"
    )


def test_negative_size(tmp_path: Path) -> None:
    path = _jobs_file(tmp_path, _job(1), _job(2, size=-4))
    assert _error(path) == f"{path}:6: jobs[1] (id 2): size -4 must be >= 1"


def test_negative_release_and_runtime(tmp_path: Path) -> None:
    path = _jobs_file(tmp_path, _job(1, release=-1))
    assert _error(path) == f"{path}:5: jobs[0] (id 1): release -1 must be >= 0"
    path = _jobs_file(tmp_path, _job(1), _job(5, runtime=-3))
    assert _error(path) == f"{path}:6: jobs[1] (id 5): runtime -3 must be >= 0"


def test_duplicate_ids(tmp_path: Path) -> None:
    path = _jobs_file(tmp_path, _job(4), _job(9), _job(4))
    assert (
        _error(path) == f"{path}:7: jobs[2] (id 4): duplicate id 4 (first at jobs[0])"
    )


def test_wrong_types(tmp_path: Path) -> None:
    path = _jobs_file(
        tmp_path, _job(1), '{"id": 2, "release": 0, "size": "4", "runtime": 1}'
    )
    assert _error(path) == (
        f"{path}:6: jobs[1] (id 2): size: expected an integer, got the string '4'"
    )
    path = _jobs_file(tmp_path, _job(1, runtime=1.5))
    assert (
        _error(path)
        == f"{path}:5: jobs[0] (id 1): runtime: expected an integer, got 1.5"
    )
    path = _jobs_file(tmp_path, _job(1, weight=True))
    assert _error(path) == (
        f"{path}:5: jobs[0] (id 1): weight: expected a number, got a boolean"
    )
    path = _jobs_file(tmp_path, "[1, 2]")
    assert _error(path) == f"{path}:5: jobs[0]: expected an object, got a list"


def test_non_finite_and_non_positive_weight(tmp_path: Path) -> None:
    path = _jobs_file(tmp_path, _job(1, weight=float("inf")))
    assert _error(path) == (
        f"{path}:5: jobs[0] (id 1): weight: expected a finite number, got inf"
    )
    path = _jobs_file(tmp_path, _job(1, weight=0))
    assert _error(path) == (f"{path}:5: jobs[0] (id 1): weight 0 must be > 0")


def test_missing_and_unknown_keys(tmp_path: Path) -> None:
    path = _jobs_file(tmp_path, _job(1), '{"id": 2, "release": 0, "size": 4}')
    assert _error(path) == f"{path}:6: jobs[1] (id 2): missing key 'runtime'"
    path = _jobs_file(tmp_path, _job(1, runtme=3))
    assert _error(path) == (
        f"{path}:5: jobs[0] (id 1): unknown key 'runtme' (expected one of: id, "
        "release, size, runtime, estimate, weight, wait, user, group, executable, "
        "queue, partition, status, preceding_job, think_time, modes, malleable)"
    )
    path = tmp_path / "no_jobs.json"
    path.write_text('{"version": 1,\n "machine": {"processors": 2}}\n')
    assert _error(path) == f"{path}:1: top level: missing key 'jobs'"


def test_field_line_in_a_pretty_printed_file(tmp_path: Path) -> None:
    data = {
        "version": 1,
        "machine": {"processors": 4},
        "jobs": [{"id": 1, "release": 0, "size": 1, "runtime": 1},
                 {"id": 17, "release": 0, "size": 5, "runtime": 1}],
    }  # fmt: skip
    path = tmp_path / "pretty.json"
    text = json.dumps(data, indent=2)
    path.write_text(text)
    size_line = text.splitlines().index('      "size": 5,') + 1
    assert size_line == 16  # {, version, machine (3), jobs [, job 0 (6), {, id, release
    assert _error(path) == (
        f"{path}:16: jobs[1] (id 17): size 5 exceeds machine processors 4"
    )


def test_invalid_json_reports_the_decoder_line(tmp_path: Path) -> None:
    path = _jobs_file(tmp_path, _job(1), '{"id": 2 "release": 0}')
    assert (
        _error(path) == f"{path}:6: invalid JSON: Expecting ',' delimiter (column 14)"
    )


def test_duplicate_key_is_an_error(tmp_path: Path) -> None:
    path = _jobs_file(
        tmp_path, _job(1), '{"id": 2, "release": 0, "size": 1,\n "size": 2}'
    )
    assert _error(path) == f"{path}:7: jobs[1].size: duplicate key 'size'"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "empty file: expected a JSON instance"),
        (b"  \n\n", "empty file: expected a JSON instance"),
        (b'{"a":\x00\x01}', "binary file: expected a JSON instance"),
        (b"[1, 2]", "top level: expected an object, got a list"),
        (b'{"version": 2, "machine": {"processors": 1}, "jobs": []}',
         "top level: version: this optsched reads version 1, got 2"),
        (b'{"format": "optsched-schedule", "version": 1}',
         "top level: format: expected 'optsched-instance', got 'optsched-schedule'"),
    ],
)  # fmt: skip
def test_bad_files(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    assert _error(path).split(": ", 1)[1] == reason


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"version": 1,\n"name": "caf\xe9"}')
    assert _error(path) == (
        f"{path}:2: not UTF-8 text (byte 0xe9): expected a JSON instance"
    )


def test_machine_and_busy_block_errors(tmp_path: Path) -> None:
    def machine_file(machine: str) -> Path:
        path = tmp_path / "machine.json"
        path.write_text('{"version": 1,\n "machine": ' + machine + ',\n "jobs": []}')
        return path

    assert _error(machine_file('{"processors": 0}')) == (
        f"{tmp_path / 'machine.json'}:2: machine: processors 0 must be >= 1"
    )
    path = machine_file('{"processors": 4, "allocation": "packed"}')
    assert _error(path).endswith(
        ":2: machine: allocation: expected one of any, contiguous, got 'packed'"
    )
    path = machine_file(
        '{"processors": 4, "allocation": "contiguous", "unavailable": [\n'
        '{"start": 0, "end": 5, "size": 2, "offset": 0},\n'
        '{"start": 0, "end": 5, "size": 3, "offset": 2}]}'
    )
    assert _error(path).endswith(
        ":4: machine.unavailable[1]: processors [2, 5) exceed machine processors 4"
    )
    path = machine_file(
        '{"processors": 4, "allocation": "contiguous", "unavailable": [\n'
        '{"start": 0, "end": 5, "size": 2}]}'
    )
    assert _error(path).endswith(
        ":3: machine.unavailable[0]: a contiguous machine needs block offsets"
    )
    path = machine_file(
        '{"processors": 4, "unavailable": [\n{"start": 0, "end": 5, "size": 3},\n'
        '{"start": 4, "end": 9, "size": 2}]}'
    )
    assert _error(path).endswith(
        ":2: machine: busy blocks use 5 processors at time 4, more than 4"
    )
    path = machine_file(
        '{"processors": 4, "allocation": "contiguous", "unavailable": [\n'
        '{"start": 0, "end": 5, "size": 2, "offset": 0, "label": "job: 1"},\n'
        '{"start": 3, "end": 9, "size": 2, "offset": 1, "label": "job 2"}]}'
    )
    assert _error(path).endswith(
        ":2: machine: busy block job 2: shares processors with busy block job: 1 "
        "at time 3"
    )
    path = machine_file(
        '{"processors": 4, "unavailable": [\n'
        '{"start": 0, "end": 5, "size": 9, "label": "a: b"}]}'
    )
    assert _error(path).endswith(
        ":3: machine.unavailable[0]: size 9 exceeds machine processors 4"
    )
    path = machine_file(
        '{"processors": 4, "unavailable": [\n{"start": 9, "end": 5, "size": 1}]}'
    )
    assert _error(path).endswith(
        ":3: machine.unavailable[0]: interval [9, 5) is invalid"
    )


def test_pinned_block_on_an_any_machine_is_refused_with_file_and_line(
    tmp_path: Path,
) -> None:
    # Blocks on "any" machines are processor counts: an offset there would pin
    # processors that a count-feasible schedule may need (the old unsound case).
    path = tmp_path / "pinned.json"
    path.write_text(
        '{"version": 1,\n "machine": {"processors": 4, "unavailable": [\n'
        '  {"start": 0, "end": 5, "size": 1},\n'
        '  {"start": 5, "end": 9, "size": 1,\n'
        '   "offset": 1, "label": "job 7"}]},\n'
        ' "jobs": []}'
    )
    assert _error(path) == (
        f"{path}:5: machine.unavailable[1]: offset 1 on an 'any' machine: blocks "
        "on 'any' machines are processor counts; drop the offset or use "
        "allocation 'contiguous'"
    )
    contiguous = tmp_path / "contiguous.json"
    contiguous.write_text(
        path.read_text()
        .replace('"processors": 4,', '"processors": 4, "allocation": "contiguous",')
        .replace('"size": 1},', '"size": 1, "offset": 0},')
    )
    assert read_native(contiguous).instance.machine.unavailable[1].offset == 1


def test_window_errors(tmp_path: Path) -> None:
    path = tmp_path / "window.json"
    path.write_text(
        '{"version": 1, "machine": {"processors": 1}, "jobs": [],\n'
        ' "source": {"window": {"initial_state": "running"}}}'
    )
    assert _error(path) == (
        f"{path}:2: source.window: initial_state: expected 'none', 'recorded' or "
        "'simulated:POLICY', got 'running'"
    )


def test_simulated_initial_state_round_trips(tmp_path: Path) -> None:
    window = Window(first_job=3, jobs=2, shift=30, initial_state="simulated:easy")
    instance = TINY.replace(source=Source("t.swf", None, "swf", window))
    path = tmp_path / "sim.json"
    write_native(instance, path)
    assert read_native(path).instance == instance


def test_instance_from_dict_names_the_json_path_without_line() -> None:
    data = instance_to_dict(TINY)
    data["jobs"][1]["size"] = 5
    with pytest.raises(InputError) as info:
        instance_from_dict(data, "x.json")
    assert (
        str(info.value) == "x.json: jobs[1] (id 2): size 5 exceeds machine processors 4"
    )


def test_failed_write_leaves_no_partial_file(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    out.write_text("previous content")
    # A lone surrogate cannot be encoded as UTF-8: the write fails midway.
    broken = TINY.replace(name="\udc80")
    with pytest.raises(UnicodeEncodeError):
        write_native(broken, out)
    assert out.read_text() == "previous content"
    assert os.listdir(tmp_path) == ["out.json"]
