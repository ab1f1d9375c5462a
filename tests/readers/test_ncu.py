"""The Nsight Compute reader on real exports (tests/fixtures/ncu) and on hostile input."""

import io
import sys

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tuneadvise.advisor.readers import ncu
from tuneadvise.advisor.readers.ncu import (
    MAX_LINE,
    NcuConversionError,
    is_ncu_export,
    read_lines,
    read_ncu,
)
from tuneadvise.cli.main import cli

from ..advisor.ncu_fixtures import launches, text
from ..helpers import ABORT_PAST_MEMORY


def test_launches_of_two_processes_stay_apart():
    both = launches("processes")
    by_process = {}
    for launch in both:
        by_process.setdefault(launch.process_id, []).append(launch)
    assert len(by_process) == 2
    # ncu numbers the launches of the whole run; the process says whose each one is
    assert [launch.launch_id for launch in both] == list(range(30))
    assert [len(group) for group in by_process.values()] == [9, 21]
    assert {launch.process_name for launch in both} == {"ncu_templates", "python3.12"}


def test_each_launch_keeps_its_kernel_and_configuration():
    read = launches("ncu_templates")
    names = list(dict.fromkeys(launch.kernel for launch in read))
    assert [name.split("(")[0] for name in names] == ["void block_sum<64>", "void block_sum<128>", "void block_sum<512>"]
    assert [launch.grid for launch in read if launch.kernel == "void block_sum<64>(const float *, float *, int, int)"] == \
        [(131, 1, 1), (330, 1, 1), (1056, 1, 1)]


def test_scaled_and_base_units_give_the_same_launches():
    scaled, base = launches("smem_import"), launches("smem_import_base")
    assert len(scaled) == len(base) == 62
    for a, b in zip(scaled, base):
        for key, value in b.metrics.items():
            assert abs(a.metrics[key] - value) <= a.rounding.get(key, 0) + 1e-6, key
    assert any(launch.rounding for launch in scaled) and not any(launch.rounding for launch in base)


def test_a_direct_export_and_an_imported_report_agree_on_the_launches():
    direct, imported = launches("ncu_smem"), launches("smem_import_base")
    assert [(launch.kernel, launch.grid, launch.block) for launch in direct] == \
        [(launch.kernel, launch.grid, launch.block) for launch in imported]
    assert all(a.metrics["shared_mem_config_size"] == b.metrics["shared_mem_config_size"]
               for a, b in zip(direct, imported))


def test_recognised_by_content():
    assert is_ncu_export(text("ncu_tails").encode()[:4096])
    assert not is_ncu_export(b"ptxas info    : Used 40 registers")


def test_a_saved_report_without_ncu_says_how_to_export(tmp_path, monkeypatch):
    report = tmp_path / "R.ncu-rep"
    report.write_bytes(b"NVR\0\x02\0\0\0" + bytes(64))
    monkeypatch.setattr(ncu.shutil, "which", lambda name: None)
    with pytest.raises(NcuConversionError, match=r"ncu --import R.ncu-rep --csv > report.csv"):
        read_ncu(report)


def test_a_bad_value_is_a_problem_with_its_line_and_the_rest_is_read():
    lines = text("ncu_tails").splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if '"Registers Per Thread"' in line)
    lines[index] = lines[index].replace('"16",', '"sixteen",')
    result = read_lines(lines, "edited.csv")
    assert len(result.launches) == 39
    assert len(result.problems) == 1 and result.problems[0].line == index + 1
    assert "Registers Per Thread: expected a number" in result.problems[0].message


def test_an_overlong_line_is_skipped_not_held(tmp_path):
    path = tmp_path / "long.csv"
    body = text("ncu_templates")
    header, rest = body.split('"ID","Process ID"', 1)
    path.write_text(header + '"ID","Process ID"' + rest + '"' + "x" * (3 * MAX_LINE) + "\n")
    result = read_ncu(path)
    assert len(result.launches) == 9


def test_not_an_export():
    result = read_lines(["hello\n", "world\n"], "x.csv")
    assert not result.launches and "ncu --csv" in result.problems[0].message


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(text("ncu_templates").splitlines(keepends=True)[:120]) | st.text(max_size=80),
                max_size=60))
def test_hostile_lines_never_raise(lines):
    result = read_lines(lines, "fuzz.csv")
    assert len(result.problems) <= ncu.MAX_PROBLEMS + 1
    for launch in result.launches:
        assert all(isinstance(v, float) for v in launch.metrics.values())


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=400))
def test_hostile_bytes_never_raise(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("ncu") / "f.csv"
    path.write_bytes(b'"ID","Process ID"' + data)
    try:
        read_ncu(path)
    except NcuConversionError:
        pytest.fail("a CSV is never converted")


def test_stream_holds_one_launch_at_a_time():
    """The reader takes an iterator: it never needs the whole text."""
    result = read_lines(io.StringIO(text("ncu_triton")), "t.csv")
    assert len(result.launches) == 11


# -- exports as users keep and pass them (issue: launches lost without a word) ---------------

def test_appended_exports_lose_no_launch():
    """`ncu --csv ./a >> all.csv; ncu --csv ./b >> all.csv`: a header row again, IDs from 0."""
    names = ("ncu_tails", "ncu_cupy", "ncu_templates", "ncu_triton")
    appended = read_lines(io.StringIO("".join(text(name) for name in names)), "all.csv")
    assert not appended.problems
    assert [(launch.kernel, launch.launch_id, launch.grid) for launch in appended.launches] == \
        [(launch.kernel, launch.launch_id, launch.grid) for name in names for launch in launches(name)]
    assert [launch.metrics for launch in appended.launches] == \
        [launch.metrics for name in names for launch in launches(name)]


def test_a_byte_order_mark_is_ignored_first_or_appended():
    body = "\ufeff" + text("ncu_cupy") + "\ufeff" + text("ncu_templates")
    result = read_lines(io.StringIO(body), "bom.csv")
    assert not result.problems
    assert len(result.launches) == len(launches("ncu_cupy")) + len(launches("ncu_templates"))


def test_an_optional_column_after_the_required_ones_is_read_or_absent():
    header = ('"ID","Process ID","Process Name","Kernel Name","Block Size","Grid Size","Metric Name",'
              '"Metric Unit","Metric Value","CC"\n')
    short = '"0","1","p","k","(1, 1, 1)","(1, 1, 1)","Registers Per Thread","register/thread","32"\n'
    full = '"1","1","p","k","(1, 1, 1)","(1, 1, 1)","Registers Per Thread","register/thread","32","9.0"\n'
    result = read_lines([header, short, full], "c.csv")
    assert [launch.compute_capability for launch in result.launches] == ["", "9.0"]
    assert all(launch.metrics["registers"] == 32 for launch in result.launches)


def test_a_gzipped_export_is_read_as_it_is():
    from ..advisor.ncu_fixtures import FIXTURES

    result = read_ncu(FIXTURES / "ncu_tails.csv.gz")
    assert not result.problems
    assert [launch.metrics for launch in result.launches] == [launch.metrics for launch in launches("ncu_tails")]


def test_a_damaged_gzip_is_one_problem(tmp_path):
    from ..advisor.ncu_fixtures import FIXTURES

    path = tmp_path / "cut.csv.gz"
    path.write_bytes((FIXTURES / "ncu_tails.csv.gz").read_bytes()[:3000])
    result = read_ncu(path)
    assert len(result.problems) == 1 and "gzip" in result.problems[0].message


def test_a_gzip_bomb_stops_at_the_bound(tmp_path, monkeypatch):
    import gzip

    monkeypatch.setattr(ncu, "MAX_DECOMPRESSED", 1 << 20)
    path = tmp_path / "bomb.csv.gz"
    path.write_bytes(gzip.compress(text("ncu_templates").encode() + b"x," * (4 << 20)))
    result = read_ncu(path)
    assert any("decompresses to more than" in p.message for p in result.problems)


def test_the_figures_of_every_section_are_read_by_label_and_unit():
    from tuneadvise.advisor.readers.ncu import metric_key

    assert metric_key("Memory Throughput", "%") == "sol_memory_pct"
    assert metric_key("Memory Throughput", "Gbyte/second") == "dram_bytes_per_second"
    assert metric_key("Eligible Warps Per Scheduler", "warp") == "eligible_warps_per_scheduler"
    assert metric_key("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", "") == \
        "stall_long_scoreboard"
    assert metric_key("smsp__average_warp_latency_issue_stalled_barrier.ratio", "") == "stall_barrier"
    assert metric_key("Something Else", "") is None


def fake_ncu(tmp_path, monkeypatch, body: str):
    """A stand-in `ncu` on PATH running `body` (sh), and a saved report for it to convert."""
    import os
    import stat

    fake = tmp_path / "bin" / "ncu"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\n{body}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    report = tmp_path / "R.ncu-rep"
    report.write_bytes(b"NVR\0" + bytes(60))
    return report


def test_a_saved_report_is_converted_by_ncu_on_path(tmp_path, monkeypatch):
    """`.ncu-rep`: converted through `ncu --import R --csv --print-units base` when ncu is on PATH
    (here a stand-in that prints a recorded conversion of a saved report in base units)."""
    from ..advisor.ncu_fixtures import FIXTURES

    report = fake_ncu(tmp_path, monkeypatch, '[ "$1" = --import ] && [ "$3" = --csv ] && '
                      '[ "$4 $5" = "--print-units base" ] || exit 9\n'
                      f"gzip -dc '{FIXTURES / 'smem_import_base.csv.gz'}'")
    result = read_ncu(report)
    assert not result.problems
    assert [launch.metrics for launch in result.launches] == \
        [launch.metrics for launch in launches("smem_import_base")]


def test_a_conversion_that_fails_is_one_error(tmp_path, monkeypatch):
    report = fake_ncu(tmp_path, monkeypatch, 'echo "==ERROR== cannot open report" >&2; exit 1')
    with pytest.raises(NcuConversionError, match=r"^ncu --import R.ncu-rep --csv failed: ==ERROR== cannot open report$"):
        read_ncu(report)


def test_a_conversion_that_hangs_is_killed(tmp_path, monkeypatch):
    monkeypatch.setattr(ncu, "CONVERT_TIMEOUT_S", 1)
    report = fake_ncu(tmp_path, monkeypatch, "exec sleep 60")
    with pytest.raises(NcuConversionError, match=r"^ncu --import R.ncu-rep --csv failed: stopped after 1 s$"):
        read_ncu(report)


@pytest.mark.skipif(sys.platform != "linux", reason="the address space is capped through /bin/sh's ulimit -v")
def test_a_conversion_past_its_memory_is_one_line_naming_the_bound(tmp_path, monkeypatch):
    """`ncu --import` runs within CONVERT_MEMORY_MIB of address space: a stand-in that allocates
    past it (and aborts, as ncu does on a refused allocation) is one line of bad input, exit 2,
    naming the bound. (A run within it converts: test_a_saved_report_is_converted_by_ncu_on_path.)"""
    monkeypatch.setattr(ncu, "CONVERT_MEMORY_MIB", 256)
    report = fake_ncu(tmp_path, monkeypatch, f"exec '{sys.executable}' -c '{ABORT_PAST_MEMORY}'")
    expected = "ncu --import R.ncu-rep --csv failed: exited with status -6 (each ncu process may use 256 MiB)"
    with pytest.raises(NcuConversionError) as refused:
        read_ncu(report)
    assert str(refused.value) == expected
    result = CliRunner().invoke(cli, ["lint", str(report)])
    assert result.exit_code == 2 and result.stderr == f"tuneadvise: bad input: {report}: {expected}\n"


def test_a_problem_repeated_on_every_launch_is_said_once_with_a_count():
    lines = [line.replace('"Registers Per Thread","register/thread","16"', '"Registers Per Thread","register/thread","x"')
             for line in text("ncu_tails").splitlines(keepends=True)]
    result = read_lines(lines, "edited.csv")
    broken = sum('"Registers Per Thread","register/thread","x"' in line for line in lines)
    assert broken > 10
    assert len(result.problems) == 1
    assert result.problems[0].message.endswith(f"(and {broken - 1} more rows like it)")


@pytest.mark.parametrize("line", ["x" * 200_000, '"' + "y" * 200_000 + '"', ",".join(["z" * 150_000] * 2)],
                         ids=["output", "quoted", "two-cells"])
def test_a_line_past_the_csv_field_limit_is_one_problem_and_the_rest_is_read(line):
    """A program under ncu printing a long line among the rows (the profiled program's own output
    is interleaved with ncu's), shorter than MAX_LINE but past csv's field limit: that line is said,
    every launch of the export is still read."""
    lines = text("ncu_tails").splitlines(keepends=True)
    whole = len(read_lines(lines, "tails.csv").launches)
    header = next(i for i, text_line in enumerate(lines) if text_line.startswith('"ID"'))
    for at in (header - 1, header + 5, len(lines)):
        edited = lines[:at] + [line + "\n"] * 3 + lines[at:]
        result = read_lines(edited, "edited.csv")
        assert len(result.launches) == whole and len(result.problems) == 1, result.problems
        assert result.problems[0].line == at + 1 and "(and 2 more lines like it)" in result.problems[0].message


def test_a_gzip_bomb_is_refused_after_a_bounded_read(tmp_path):
    """1 MB of gzip that makes 1 GiB (a header, then zeros) took 9 s to read to its end; real
    exports compress 18 to 39 times (tests/fixtures/ncu), so past ncu.MAX_RATIO it is refused."""
    import gzip
    import time

    path = tmp_path / "bomb.csv.gz"
    with gzip.open(path, "wb", compresslevel=9) as handle:
        handle.write(text("ncu_templates").encode())
        zeros = b"0" * (1 << 20)
        for _ in range(1024):
            handle.write(zeros)
    started = time.process_time()
    result = read_ncu(path)
    assert time.process_time() - started < 4
    assert any(f"over {ncu.MAX_RATIO} times its size" in p.message for p in result.problems), result.problems
    real = gzip.compress(text("ncu_sweep").encode())  # the most compressible recording still reads whole
    (tmp_path / "sweep.csv.gz").write_bytes(real)
    assert not read_ncu(tmp_path / "sweep.csv.gz").problems
