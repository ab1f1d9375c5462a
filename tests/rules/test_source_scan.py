"""check-source reads code, not comments or literals, in linear time."""

import json
import time

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tuneadvise.advisor.readers.cuda_source import strip_comments
from tuneadvise.advisor.rules.source_scan import scan_source
from tuneadvise.cli.main import cli
from tuneadvise.specs.catalog import shipped_catalog


def archs(*names: str) -> list:
    return [shipped_catalog().resolve(name).arch for name in names]


VOLTA = archs("sm_70")


def codes(text: str, targets=VOLTA) -> list[tuple[str, int]]:
    return [(f.code, f.details["line"]) for f in scan_source(text, "k.cu", targets)]


def test_code_inside_string_and_character_literals_is_not_flagged():
    # TA801 is an error: a string or character literal that names an intrinsic is not a call.
    assert codes('printf("__shfl_up(x, 1)\\n");') == []
    assert codes("const char *doc = R\"x(__ballot(1) \" still raw)x\";") == []
    assert codes("char q = '\"'; int n = 1'000; int v = __shfl_up(v, 1);") == [("TA801", 1)]


def test_the_cli_agrees(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text('__global__ void k() { printf("__shfl_up(x, 1)"); }\n')
    result = CliRunner().invoke(cli, ["check-source", str(path), "--target", "sm_70", "--format", "json"])
    assert result.exit_code == 0 and json.loads(result.output)["findings"] == []


def test_comments_still_hide_code_and_suppressions_still_apply():
    text = ("/* __shfl(a, 1)\n   __any(1) */ int a = __shfl(a, 1);\n"
            "int b = __mul24(2, 3); // tuneadvise: ignore[TA803]\nint c = __mul24(2, 3);\n")
    assert codes(text) == [("TA801", 2), ("TA803", 4)]
    assert [comment for _, comment in strip_comments(text)][2] == " tuneadvise: ignore[TA803]"


def test_every_marker_of_a_comment_suppresses():
    """check-source reads `ignore[...]` markers as lint's source index does: each marker counts."""
    line = "int a = __mul24(2, 3) + __shfl(a, 1); // tuneadvise: ignore[TA801] tuneadvise: ignore[TA803]"
    assert codes(line.split(" //")[0]) == [("TA801", 1), ("TA803", 1)]
    assert codes(line) == []


def test_volatile_declarations_per_statement():
    assert codes("volatile int x = 0; volatile float *p;") == [("TA802", 1)]
    assert codes("volatile int x = 0;") == []
    assert codes("__shared__ volatile int s[32];") == [("TA802", 1)]


def _seconds(text: str) -> float:
    """The best of three, in this process's CPU time: other processes on a busy machine add none."""
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        scan_source(text, "k.cu", VOLTA)
        best = min(best, time.process_time() - start)
    return best


def test_scanning_time_grows_linearly_on_hostile_input():
    # Repeated openers ("volatile volatile ...", "/* /* /* ...") are where a backtracking scan goes quadratic.
    for unit in ("volatile ", "/* ", '"', "'a", 'R"x(', "__shfl(", "volatile *", "//\n"):
        small, large = _seconds(unit * 20_000), _seconds(unit * 80_000)
        assert large < 0.05 or large / max(small, 1e-4) < 10, (unit, small, large)  # 4x the input, not 16x


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*"/*\"'\\R()x \n\r;=", "__shfl_up(", "volatile", "//", "/*", "*/", "\u2028",
                                 "__shared__", "__mul24(", "__syncwarp", 'R"d(', ')d"']),
                max_size=2000).map("".join))
def test_any_text_scans_without_error_in_bounded_time_and_keeps_its_lines(text):
    lines = strip_comments(text)
    assert len(lines) == text.count("\n") + (not text.endswith("\n") and text != "")
    start = time.process_time()
    for finding in scan_source(text, "k.cu", VOLTA):
        assert 1 <= finding.details["line"] <= len(lines)
    # Up to ~20 KB of hostile text: linear scanning takes milliseconds; backtracking took minutes.
    assert time.process_time() - start < 1.0


def test_the_summary_counts_in_words_and_paths_are_not_markup(tmp_path):
    path = tmp_path / "[bold]k.cu"
    path.write_text("int i = __mul24(1, 2);\n")
    result = CliRunner().invoke(cli, ["check-source", str(path), "--target", "sm_70"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "[bold]k.cu:1:9: __mul24" in result.output
    assert result.output.splitlines()[-1] == "1 finding in 1 file for sm_70"


@pytest.mark.parametrize("command", [["check-source", "--target", "sm_70"], ["lint", "--arch", "sm_70"]])
def test_a_location_is_never_turned_into_an_emoji(tmp_path, command):
    """rich replaces ':name:' with an emoji: a finding on line 100 printed as 'k.cu💯 __shfl ...'
    (and line 1234 as 'k.cu🔢'), which no editor can jump to."""
    path = tmp_path / "k.cu"
    lines = [""] * 1234
    lines[99] = lines[1233] = "__global__ void k(float* x) { x[0] = __shfl(x[1], 1); }"
    path.write_text("\n".join(lines) + "\n")
    log = tmp_path / "build.log"
    log.write_text("ptxas info    : Compiling entry function 'k' for 'sm_70'\nptxas info    : Used 32 registers\n")
    inputs = [str(path)] if command[0] == "check-source" else [str(log), str(path)]
    result = CliRunner().invoke(cli, [command[0], *inputs, *command[1:]])
    assert f"{path}:100:" in result.output and f"{path}:1234:" in result.output, result.output
    assert "\U0001f4af" not in result.output and "\U0001f522" not in result.output


def test_the_console_prints_colon_names_as_written(capsys):
    """Every command's rich console, not only check-source's lines: 'k.cu:100:' stays as written."""
    from tuneadvise.cli.common import console

    console().print("k.cu:100: k.cu:1234: :smile:", markup=False)
    assert capsys.readouterr().out == "k.cu:100: k.cu:1234: :smile:\n"


def test_each_finding_is_one_unwrapped_line_however_many(tmp_path):
    """Compiler-style `file:line:column: message [code severity]` lines, never wrapped (an editor jumps to
    them), all printed at once: 1 MB of `__shfl(` on one line is 142,858 findings (printing each
    through its own console call took 8 s)."""
    path = tmp_path / "k.cu"
    path.write_text("__shfl(" * 142_858)
    result = CliRunner().invoke(cli, ["check-source", str(path), "--target", "sm_70"], env={"COLUMNS": "40"})
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert len(lines) == 142_858 + 1 and lines[-1] == "142,858 findings in 1 file for sm_70"
    assert lines[0] == (f"{path}:1:1: __shfl does not compile for sm_70 (no lock-step warps from 7.0); "
                        "use __shfl_sync with a lane mask [TA801 error]")
    assert lines[-2].startswith(f"{path}:1:{7 * 142_857 + 1}: __shfl does not")


def test_a_control_character_in_a_path_is_escaped_not_sent_to_the_terminal(tmp_path):
    """A file named with ESC [31m recoloured the user's terminal (rich and click passed it through
    on a terminal); human output escapes control characters, as lint's does."""
    path = tmp_path / "e\x1b[31mvil.cu"
    path.write_text("int v = __shfl(x, 1);\n")
    result = CliRunner().invoke(cli, ["check-source", str(path), "--target", "sm_70"], color=True)
    assert "\x1b" not in result.output
    assert result.output.splitlines()[0].startswith(str(tmp_path / "e\\x1b[31mvil.cu") + ":1:9: __shfl")
