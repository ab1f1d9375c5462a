"""Documentation examples are executed, so they cannot go stale."""

import json
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from tuneadvise.advisor.rules import registry
from tuneadvise.advisor.rules.markdown import example_command, rules_page
from tuneadvise.cli.main import cli

from ..helpers import ROOT
from ..reference import nvcc
from ..reference.header import required


def invoke(command_line: str):
    args = shlex.split(command_line)
    assert args[0] == "tuneadvise"
    return CliRunner().invoke(cli, args[1:], catch_exceptions=False)


def test_rules_page_matches_registry():
    assert (ROOT / "docs" / "rules.md").read_text() == rules_page(), \
        "regenerate with: python -m tuneadvise.advisor.rules.markdown > docs/rules.md"


@pytest.mark.parametrize("code", sorted(registry()))
def test_documented_rule_examples_run_through_the_cli(code, tmp_path):
    rule = registry()[code]
    if rule.kind == "source":
        for example, expect in ((rule.trigger, True), (rule.clean, False)):
            path = tmp_path / "file.cu"
            path.write_text(example["source"])
            result = CliRunner().invoke(cli, ["check-source", str(path), "--target", example["target"],
                                              "--format", "json", "--fail-on", "warning"])
            codes = [f["code"] for f in json.loads(result.output)["findings"]]
            assert (code in codes) is expect and result.exit_code == (1 if expect else 0)
        return
    if rule.kind == "lint":
        for example, expect in ((rule.trigger, True), (rule.clean, False)):
            assert (code in _lint_documented_example(example_command(example), tmp_path)) is expect
        return
    if rule.kind == "measured":
        for example, expect in ((rule.trigger, True), (rule.clean, False)):
            assert (code in _measured_documented_example(example, tmp_path)) is expect
        return
    triggered = invoke(example_command(rule.trigger) + " --format json")
    assert code in [f["code"] for f in json.loads(triggered.output)["findings"]]
    quiet = invoke(example_command(rule.clean) + " --format json")
    assert code not in [f["code"] for f in json.loads(quiet.output)["findings"]]


def _measured_documented_example(example: dict, tmp_path) -> list:
    """Write the export the documented figures describe (and the config it shows), run the documented command."""
    from tuneadvise.advisor.rules.families.ta0_measured import example_export

    text = example_command(example)
    (tmp_path / "report.csv").write_text(example_export(example["ncu"]))
    if text.startswith("# tuneadvise.toml\n"):
        (tmp_path / "tuneadvise.toml").write_text(text.split("# report.csv", 1)[0].removeprefix("# tuneadvise.toml\n"))
    command = text.rsplit("# checked with: ", 1)[1]
    args = [str(tmp_path / a) if a in ("report.csv", "tuneadvise.toml") else a for a in shlex.split(command)[1:]]
    result = CliRunner().invoke(cli, args + ["--format", "json"], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    document = json.loads(result.output)
    # A finding said once per run (TA008) is among the run's findings, not a launch's.
    return [f["code"] for k in document["kernels"] for f in k["findings"]] + \
        [f["code"] for f in document["source_findings"]]


def _lint_documented_example(text: str, tmp_path) -> list:
    """Write the documented tuneadvise.toml and build.log (or the CUDA source lint compiles), run
    the documented command."""
    if text.startswith("# file.cu\n"):
        return _compiled_documented_example(text, tmp_path)
    config, rest = text.split("# build.log\n")
    log, command = rest.rsplit("# checked with: ", 1)
    earlier = re.search(r"# baseline.json \(an earlier build\) records (\d+) registers for (\w+)\n", log)
    if earlier:  # the earlier build, as lint --update-baseline writes it
        log = log.replace(earlier.group(0), "")
        kernels = {f"{earlier.group(2)}@sm_90": {"registers": int(earlier.group(1)), "findings": []}}
        (tmp_path / "baseline.json").write_text(json.dumps({"kind": "tuneadvise-lint-baseline", "kernels": kernels}))
    log, _, source = log.partition("# file.cu\n")
    (tmp_path / "file.cu").write_text(source)
    (tmp_path / "tuneadvise.toml").write_text(config.removeprefix("# tuneadvise.toml\n"))
    (tmp_path / "build.log").write_text(log)
    args = shlex.split(command)[1:]
    args = [str(tmp_path / a) if a in ("build.log", "tuneadvise.toml", "file.cu", "baseline.json") else a for a in args]
    if "--baseline" in command:  # the config lint finds by itself, in the directory it runs in
        args += ["--config", str(tmp_path / "tuneadvise.toml")]
    result = CliRunner().invoke(cli, args + ["--format", "json"], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    doc = json.loads(result.stdout)  # a kernel's findings, and the run's (TA906 is said once for the run)
    return [f["code"] for k in doc["kernels"] for f in k["findings"]] + [f["code"] for f in doc["source_findings"]]


def _compiled_documented_example(text: str, tmp_path) -> list:
    """A documented source that lint compiles and disassembles (skipped without nvcc and nvdisasm,
    failed instead where TUNEADVISE_REQUIRE_REFERENCE=1)."""
    required(nvcc.installed, "NVIDIA's compiler and disassembler, to compile the example (the [nvcc] extra)")
    source, command = text.removeprefix("# file.cu\n").rsplit("# checked with: ", 1)
    (tmp_path / "file.cu").write_text(source)
    args = [str(tmp_path / a) if a == "file.cu" else a for a in shlex.split(command)[1:]]
    result = CliRunner().invoke(cli, args + ["--format", "json"], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return [f["code"] for k in json.loads(result.stdout)["kernels"] for f in k["findings"]]


def test_readme_first_command_runs():
    first = re.search(r"```bash\n(.*?)\n```", (ROOT / "README.md").read_text(), re.S).group(1)
    command = first.split("&&", 1)[1].strip()
    result = invoke(command + " --format json")
    assert result.exit_code == 0 and json.loads(result.output)["active_blocks_per_sm"] == 4


def test_readme_test_command_is_what_ci_runs():
    readme_blocks = re.findall(r"```bash\n(.*?)\n```", (ROOT / "README.md").read_text(), re.S)
    assert readme_blocks[1].strip() in (ROOT / ".ci" / "run").read_text()


def test_readme_library_example():
    code = re.search(r"```python\n(.*?)\n```", (ROOT / "README.md").read_text(), re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})


def test_occupancy_page_example():
    text = (ROOT / "docs" / "occupancy.md").read_text()
    command = re.search(r"\$ (tuneadvise occupancy .*)", text).group(1)
    doc = json.loads(invoke(command).output)
    assert (doc["active_blocks_per_sm"], doc["occupancy"], doc["limiters"]) == (4, 0.5, ["registers"])
    assert f'"active_blocks_per_sm": {doc["active_blocks_per_sm"]}' in text


def test_lint_page_config_example_runs(tmp_path):
    text = (ROOT / "docs" / "lint.md").read_text()
    config = re.search(r"```toml\n# tuneadvise.toml\n(.*?)\n```", text, re.S).group(1)
    (tmp_path / "tuneadvise.toml").write_text(config)
    fixtures = ROOT / "tests" / "fixtures" / "lint"
    result = CliRunner().invoke(cli, ["lint", str(fixtures / "ptxas_multi.log"), str(fixtures / "lint_multi.o"),
                                      "--config", str(tmp_path / "tuneadvise.toml"), "--format", "json"])
    doc = json.loads(result.stdout)
    kernels = {(k["name"], k["arch"]): k for k in doc["kernels"]}
    assert {arch for _, arch in kernels} == {"sm_80", "sm_90"}
    assert kernels[("_Z12tiled_matmulPKfS0_Pfi", "sm_90")]["launch"]["block_dims"] == [16, 16]
    codes = {f["code"] for k in doc["kernels"] for f in k["findings"]}
    assert "TA304" not in codes and {"TA901", "TA902", "TA903"} <= codes
    assert result.exit_code == 1


def test_pre_commit_hook_points_at_lint():
    import yaml

    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "tuneadvise-lint" and hook["entry"] == "tuneadvise lint"


def test_occupancy_page_graphs_example(tmp_path, monkeypatch):
    """The documented --graphs/--plot command runs, and the documented picture is what it draws."""
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    text = (ROOT / "docs" / "occupancy.md").read_text()
    command = re.search(r"\$ (tuneadvise occupancy .*--graphs.*)", text).group(1)
    monkeypatch.chdir(tmp_path)
    result = invoke(command + " --format table")
    assert result.exit_code == 0 and (tmp_path / "occupancy.png").stat().st_size > 10_000
    documented = re.search(r"```text\n(Impact of varying register.*?)\n```", text, re.S).group(1)
    # The page shows the terminal's drawing (box drawing); piped, the same chart is drawn in ASCII.
    from tuneadvise.advisor import analyze
    from tuneadvise.advisor.engine.curves import occupancy_curves
    from tuneadvise.cli.charts import ASCII, UNICODE
    from tuneadvise.cli.curves_render import curve_lines

    curve = occupancy_curves(analyze("volta", registers=64, block_size=256, shared_mem="12K"))[1]
    terminal = [line.plain.rstrip() for line in curve_lines(curve, 66, glyphs=UNICODE)]
    assert terminal == documented.splitlines()
    drawn = result.stdout.splitlines()
    start = next(i for i, line in enumerate(drawn) if line.startswith("Impact of varying register"))
    top = next(i for i in range(start, len(drawn)) if "100% +" in drawn[i])
    piped = [line.plain.rstrip() for line in curve_lines(curve, 66, glyphs=ASCII)]
    assert [line.rstrip() for line in drawn[top:top + 14]] == piped[1:]


def test_roofline_page_kernels_example(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    text = (ROOT / "docs" / "roofline.md").read_text()
    command = re.search(r"\$ (tuneadvise roofline .*--kernels.*)", text).group(1)
    command = command.replace("docs/examples/", str(ROOT / "docs" / "examples") + "/")
    monkeypatch.chdir(tmp_path)
    doc = json.loads(invoke(command + " --format json").stdout)
    assert [k["name"] for k in doc["kernels"]] == ["stream_triad", "dgemm_tile", "stencil7"]
    assert (tmp_path / "roofline.svg").read_text().lstrip().startswith("<?xml")
    toml_example = re.search(r"```toml\n(.*?)\n```", text, re.S).group(1)
    assert toml_example in (ROOT / "docs" / "examples" / "roofline-kernels.toml").read_text()


# --------------------------------------------------------------------------
# Every example in README.md and docs/*.md, found, not listed
# --------------------------------------------------------------------------
#
# A fenced block of bash, sh, shell or console, or one with no language, has
# each `tuneadvise ...` command in it run (in a `console` block, the lines
# after a `$ tuneadvise ...` line are its documented output and must be what
# it prints); a python block is executed. The commands of one page run in
# order in one scratch folder, so a page may write a file and read it later.
# A command may write its standard output to a file (`tuneadvise ... > FILE`).
# A block is left out only by a visible marker on the line before it:
#     <!-- not-run: needs a GPU -->
# and a block's exit code is pinned by  <!-- exit: 1 -->  (otherwise 0 or 1,
# the two outcomes of a successful run: see the README's exit codes).
# <!-- file: NAME --> before a block of any language writes the block, as shown, to NAME
# in the page's folder, where the later commands of the page read it (a config, a workflow).
# <!-- needs: nvcc --> runs the block with NVIDIA's compiler and disassembler (tests/reference/nvcc.py:
# skipped only where it cannot be installed, and never where TUNEADVISE_REQUIRE_REFERENCE=1).

DOC_PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN_LANGUAGES = {"bash", "sh", "shell", "console", ""}
FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.S | re.M)
MARKER = re.compile(r"<!--\s*(not-run|exit|needs|file):\s*(.*?)\s*-->")
# The files the pages' examples name, as the recorded build output standing in for them.
FIXTURES = ROOT / "tests" / "fixtures" / "lint"
DOC_FILES = {
    "build.log": FIXTURES / "ptxas_multi.log",
    "kernels.o": FIXTURES / "lint_multi.o",
    "kernels.cu": ROOT / "tests" / "gpu" / "lint_kernels.cu",
    "build/ptxas.log": ROOT / "docs" / "examples" / "build" / "ptxas.log",  # shipped for the CI walk-through
    "build/ptxas-next.log": ROOT / "docs" / "examples" / "build" / "ptxas-next.log",
    "tests/gpu/lint_kernels.cu": ROOT / "tests" / "gpu" / "lint_kernels.cu",
    "build/kernels.o": FIXTURES / "lint_multi.o",
    "build/compile_commands.json": ROOT / "docs" / "examples" / "compile_commands.json",
    "build/kernels.cu": ROOT / "docs" / "examples" / "kernels.cu",
    "tiled_kernels.cu": ROOT / "tests" / "fixtures" / "sources" / "tiled_kernels.cu",
    "docs/examples/roofline-kernels.toml": ROOT / "docs" / "examples" / "roofline-kernels.toml",
    "saxpy.cubin": ROOT / "tests" / "fixtures" / "python_caches" / "numba" / "saxpy.cubin",
    **{f"triton-cache/{entry[:8]}/matmul_kernel.{kind}": ROOT / "tests" / "fixtures" / "python_caches" / "triton_cache" / entry /
       f"matmul_kernel.{kind}" for entry in ("TUJENDXYVFBP6Z5XXPHCCVLFM7NOQERE6SWVXIZWFTZKSKOCMJ3Q",
                                              "VPEU7GXJ2KEJH5BZPAVPUPKDLFLZ5JT2P7INUO5VPDAL3DRUWMQA",
                                              "ZQHSZEDWWJH7A3TUR7D3NOZMLEAASH353J2UYPNEIRKE4HX3MVLA",
                                              "UZIY7UVEGKGMDCMMQ2JPAKJ3SLIQKP6YJGDRUJKZHJ3ZBRE5LVUA") for kind in ("cubin", "json")},
}


def doc_blocks(text: str):
    """(language, body, markers, line number) of each fenced block; markers from the line before it."""
    for match in FENCE.finditer(text):
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        markers = dict(MARKER.findall(before))
        yield match.group("lang").lower(), match.group("body"), markers, text.count("\n", 0, match.start()) + 1


def doc_commands(lang: str, body: str):
    """(command line, documented output or None) for each tuneadvise command of a block."""
    lines = body.splitlines()
    if lang == "console":
        for index, line in enumerate(lines):
            if line.startswith("$ tuneadvise"):
                rest = lines[index + 1:]
                shown = rest[:next((i for i, other in enumerate(rest) if other.startswith("$ ")), len(rest))]
                yield line[2:], shown or None
        return
    for line in lines:
        for part in line.split("&&"):
            words = shlex.split(part, comments=True)
            if words and words[0] == "tuneadvise":
                yield shlex.join(words), None


def _page_examples():
    for page in DOC_PAGES:
        for lang, body, markers, line in doc_blocks(page.read_text()):
            if lang == "python" or "file" in markers or (lang in RUN_LANGUAGES and any(doc_commands(lang, body))):
                yield pytest.param(page, lang, body, markers, id=f"{page.relative_to(ROOT)}:{line}")


def _scratch(tmp_path):
    for name, source in DOC_FILES.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())


@pytest.fixture(scope="module")
def page_folders(tmp_path_factory):
    """One scratch folder per page, shared by its blocks (which run in page order)."""
    folders = {}

    def folder(page):
        if page not in folders:
            folders[page] = tmp_path_factory.mktemp(page.stem)
            _scratch(folders[page])
        return folders[page]

    return folder


@pytest.mark.parametrize("page, lang, body, markers", list(_page_examples()))
def test_documented_example_runs(page, lang, body, markers, page_folders, monkeypatch):
    if "not-run" in markers:
        assert markers["not-run"], "a not-run marker says why"
        pytest.skip(f"marked not-run in {page.name}: {markers['not-run']}")
    if "plot" in body:
        pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    if markers.get("needs") == "nvcc":
        from ..toolchain.test_compile_loop import required_toolchain

        monkeypatch.setenv("CUDA_HOME", str(Path(required_toolchain().nvcc).parent.parent))
    monkeypatch.chdir(page_folders(page))
    if "file" in markers:
        Path(markers["file"]).parent.mkdir(parents=True, exist_ok=True)
        Path(markers["file"]).write_text(body)
        return
    if lang == "python":
        exec(compile(body, str(page), "exec"), {})
        return
    allowed = {int(markers["exit"])} if "exit" in markers else {0, 1}
    for command, shown in doc_commands(lang, body):
        args, written = shlex.split(command)[1:], None
        if ">" in args:  # `tuneadvise ... > FILE`: its standard output is the file later commands read
            args, written = args[:args.index(">")], args[args.index(">") + 1]
        result = CliRunner().invoke(cli, args, catch_exceptions=False, env={"COLUMNS": "80"})
        assert result.exit_code in allowed, f"{command}\n{result.output}"
        if written:
            Path(written).write_text(result.stdout)
        if shown is not None:
            assert [line.rstrip() for line in result.stdout.rstrip("\n").splitlines()] == \
                [line.rstrip() for line in shown], command


def test_examples_are_found_on_every_page_that_has_them():
    """The discovery above cannot silently find nothing."""
    found = {param.values[0].name for param in _page_examples()}
    assert {"README.md", "occupancy.md", "roofline.md", "lint.md", "rules.md", "python.md"} <= found
    assert sum(1 for _ in _page_examples()) >= 50


def test_a_wrong_documented_output_fails(tmp_path, monkeypatch):
    """The output comparison can fail: a shown output the command does not print is caught."""
    body = "$ tuneadvise occupancy --arch volta -r 64 -b 256 --format json\n{\"not\": \"this\"}\n"
    (command, shown), = doc_commands("console", body)
    result = CliRunner().invoke(cli, shlex.split(command)[1:])
    assert result.stdout.rstrip("\n").splitlines() != shown


def test_the_example_compile_commands_name_files_that_are_shipped():
    examples = ROOT / "docs" / "examples"
    for entry in json.loads((examples / "compile_commands.json").read_text()):
        assert (examples / entry["directory"] / entry["file"]).is_file(), entry["file"]


def test_only_what_needs_a_gpu_is_left_unrun():
    """A block with a tuneadvise command or Python is skipped only where it needs a GPU; other
    skipped blocks (installing, CMake) hold no tuneadvise command."""
    for page in DOC_PAGES:
        for lang, body, markers, line in doc_blocks(page.read_text()):
            runs_tuneadvise = lang == "python" or any(doc_commands(lang, body))
            if "not-run" in markers and runs_tuneadvise:
                assert "GPU" in markers["not-run"], f"{page.name}:{line}: {markers['not-run']}"


# A file a page names in backticks (`advisor/lint/diff.py`, `tests/lint/test_lint.py`): found from
# the repository root, or from the folder the page's context implies (a module under advisor/, a
# recorded fixture under tests/fixtures/, another page under docs/). `tuneadvise/...` is the
# installed name: tuneadvise/__init__.py is api/__init__.py, everything else keeps its folder.
NAMED_FILE = re.compile(r"`([\w./-]+/[\w.-]+\.(?:py|toml|cu|cpp|json|md|yml|yaml|sh))`")
NAMED_FROM = ("", "advisor", "tests/fixtures", "docs")


def named_files(text: str) -> list[str]:
    return NAMED_FILE.findall(text)


def named_file_exists(name: str) -> bool:
    if name.startswith("tuneadvise/"):
        name = "api/__init__.py" if name == "tuneadvise/__init__.py" else name.removeprefix("tuneadvise/")
    return any((ROOT / folder / name).exists() for folder in NAMED_FROM)


@pytest.mark.parametrize("page", sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"], ids=lambda p: p.name)
def test_every_file_a_page_names_exists(page):
    missing = [name for name in named_files(page.read_text()) if not named_file_exists(name)]
    assert missing == [], f"{page.name} names files that do not exist: {missing}"


def test_a_page_naming_a_missing_file_fails():
    """The check can fail: a moved module's old path is reported."""
    names = named_files("`advisor/toolchain/frontier.py` and `tests/test_report.py`, beside `advisor/text.py`")
    assert [name for name in names if not named_file_exists(name)] == ["advisor/toolchain/frontier.py",
                                                                       "tests/test_report.py"]


def test_examples_that_show_the_projects_own_output_name_files_it_ships():
    """The TA907 example linted a `kernels.cu` no reader has, and the CI walk-through's build/ptxas.log
    was not shipped: each is a file of this repository."""
    text = (ROOT / "docs" / "from-source.md").read_text()
    (command,) = re.findall(r"^\$ tuneadvise lint (\S+) .*--select TA907", text, re.M)
    assert (ROOT / command).is_file()
    walkthrough = (ROOT / "docs" / "lint.md").read_text()
    assert "[docs/examples/build/ptxas.log](examples/build/ptxas.log)" in walkthrough
    for name in ("ptxas.log", "ptxas-next.log"):
        assert (ROOT / "docs" / "examples" / "build" / name).is_file()
