"""lint DIR and tuneadvise.analyze_compiled on real kernel caches of Triton, TorchInductor,
CuPy and Numba, held to what the CUDA driver said about each kernel on an H100.

tests/fixtures/python_caches/ was made by tests/gpu/record_python_caches.py (Triton 3.6,
CuPy 14.2, numba-cuda 0.30, driver 580 / CUDA 13.0): the caches as the frameworks wrote them
(cubins and Triton's .json metadata), and driver.json with the driver's answers only:
cuFuncGetAttribute (NUM_REGS, SHARED_SIZE_BYTES, LOCAL_SIZE_BYTES, MAX_THREADS_PER_BLOCK) and
cuOccupancyMaxActiveBlocksPerMultiprocessor at the framework's launch (for Triton: 32 *
num_warps threads, the metadata's `shared` bytes dynamic, opted in above 48 KB as its launcher
does) and over a sweep of block sizes and dynamic shared memory. Every figure compared here is
recomputed by today's code from the cache files; the expected values are the driver's.
The one edit to the recorded files: the recording machine's temporary folder name, which
Triton writes into __grp__*.json and TorchInductor's cubins, was replaced by a neutral name of
the same length (so the ELF string tables keep their offsets).
"""

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tuneadvise import analyze_compiled, prune
from tuneadvise.advisor import analyze
from tuneadvise.advisor.inputs import InputError
from tuneadvise.advisor.lint.run import LintOptions, lint_paths
from tuneadvise.advisor.readers.kernel_caches import MetadataError, read_directory, triton_entry
from tuneadvise.cli.main import cli
from tuneadvise.specs.catalog import shipped_catalog

from ..helpers import TESTS

ROOT = TESTS / "fixtures" / "python_caches"
DRIVER = json.loads((ROOT / "driver.json").read_text())
ARCH = DRIVER["arch"]  # sm_90
CACHES = {"triton": ROOT / "triton_cache", "inductor": ROOT / "inductor_cache"}


def _linted(label):
    report = lint_paths([str(CACHES[label])], LintOptions())
    return report, {os.path.relpath(k.usage.file, CACHES[label]): k for k in report.kernels}


def _triton_rows():
    return [(label, row) for label in CACHES for row in DRIVER[label]]


def test_the_recording_holds_what_the_issue_needs():
    """Autotune variants of one kernel, one configuration that cannot launch, spilling ones."""
    names = [row["name"] for row in DRIVER["triton"]]
    assert names.count("matmul_kernel") >= 8 and names.count("scale_kernel") == 3
    assert any(row["driver"]["launch"]["blocks"] == 0 for row in DRIVER["triton"])
    assert sum(row["driver"]["attributes"]["local_size_bytes"] > 0 for row in DRIVER["triton"]) >= 2
    assert len(DRIVER["inductor"]) == 3 and len(DRIVER["numba"]) == 3


@pytest.mark.parametrize("label", sorted(CACHES))
def test_lint_dir_gives_every_entry_with_the_drivers_figures(label):
    report, by_entry = _linted(label)
    rows = DRIVER[label]
    assert len(report.kernels) == len(rows) and not report.problems
    for row in rows:
        kernel, driver = by_entry[row["entry"]], row["driver"]
        attributes = driver["attributes"]
        assert kernel.arch == ARCH
        assert kernel.usage.registers == attributes["num_regs"], row["entry"]
        assert kernel.usage.shared_mem == attributes["shared_size_bytes"]
        assert kernel.usage.stack_frame == attributes["local_size_bytes"]  # local memory, Triton's n_spills * 4
        assert kernel.launch.block_size == row["block"] and kernel.launch.dynamic_shared_mem == row["shared"]
        assert kernel.launch.opt_in == (row["shared"] > 49152)
        assert kernel.result.active_blocks_per_sm == driver["launch"]["blocks"], row["entry"]
        assert kernel.result.launchable == (driver["launch"]["blocks"] > 0)


def test_a_second_cache_clusters_and_32_warps_equal_the_driver(tmp_path):
    """Entries of a second cache (tests/gpu/check_lint_triton_cache.py): num_ctas=2 (a cluster
    launch), 16 and 32 warps, fp32 dot, one that cannot launch; beside them a host library as
    Triton's cache holds one, which a walk passes over."""
    root = ROOT / "triton_cache_more"
    report = lint_paths([str(root)], LintOptions())
    assert not report.problems
    by_entry = {os.path.relpath(k.usage.file, root): k for k in report.kernels}
    rows = DRIVER["triton_more"]
    assert len(rows) == len(by_entry) == 8 and {r["num_ctas"] for r in rows} == {1, 2}
    for row in rows:
        kernel = by_entry[row["entry"]]
        assert kernel.usage.registers == row["driver"]["attributes"]["num_regs"]
        assert kernel.result.active_blocks_per_sm == row["driver"]["blocks"], row["entry"]
        assert kernel.launch.cluster_size == (row["num_ctas"] if row["num_ctas"] > 1 else None)
    assert any(r["driver"]["blocks"] == 0 for r in rows)
    host = tmp_path / "cache" / "ABC"
    host.mkdir(parents=True)
    (host / "cuda_utils.cpython-312-x86_64-linux-gnu.so").write_bytes(b"\x7fELF" + bytes(200))
    (host / "add_kernel.cubin").write_bytes((next(CACHES["triton"].glob("*/add_kernel.cubin"))).read_bytes())
    (host / "add_kernel.json").write_text(next(CACHES["triton"].glob("*/add_kernel.json")).read_text())
    assert not read_directory(tmp_path / "cache").problems


def test_triton_variants_are_never_merged_and_stand_side_by_side_best_first():
    report, _ = _linted("triton")
    order = [k.name for k in report.kernels]
    for name in set(order):  # each name's entries are consecutive
        first = order.index(name)
        assert order[first:first + order.count(name)] == [name] * order.count(name)
    matmuls = [k for k in report.kernels if k.name == "matmul_kernel"]
    assert len({k.usage.variant for k in matmuls}) == len(matmuls) == 10
    ranks = [(not k.result.launchable, -k.result.occupancy) for k in matmuls]
    assert ranks == sorted(ranks) and not matmuls[-1].result.launchable
    assert all("num_warps=" in k.usage.variant and "num_stages=" in k.usage.variant for k in matmuls)


@pytest.mark.parametrize("label, row", _triton_rows(), ids=lambda v: v["entry"][-40:] if isinstance(v, dict) else v)
def test_engine_equals_the_driver_over_each_entrys_sweep(label, row):
    """With the figures lint read from the cubin: each (block, dynamic) the driver was asked,
    opted in as Triton's launcher had left the function; and before the opt-in."""
    _, by_entry = _linted(label)
    usage = by_entry[row["entry"]].usage
    opted = row["shared"] > 49152
    figures = {"registers": usage.registers, "shared_mem": usage.shared_mem}
    checked = 0
    for point in row["driver"]["sweep"]:
        if point["status"] == 0:
            result = analyze(ARCH, block_size=point["block"], dynamic_shared_mem=point["dynamic"], opt_in=opted, **figures)
            assert result.active_blocks_per_sm == point["blocks"], point
            checked += 1
    plain = row["driver"]["plain"]
    result = analyze(ARCH, block_size=plain["block"], dynamic_shared_mem=plain["dynamic"], opt_in=False, **figures)
    assert result.active_blocks_per_sm == plain["blocks"]
    assert checked >= 10


def test_cupy_cache_files_are_read_with_their_digest_checked():
    report = lint_paths([str(ROOT / "cupy_cache")], LintOptions())
    assert not report.problems
    kernels = {k.name: k for k in report.kernels}
    compared = 0
    for row in DRIVER["cupy"]["cache"]:
        for function in row.get("functions", []):
            usage, attributes = kernels[function["name"]].usage, function["attributes"]
            assert (usage.registers, usage.shared_mem, usage.stack_frame) == \
                (attributes["num_regs"], attributes["shared_size_bytes"], attributes["local_size_bytes"])
            for point in function["sweep"]:
                if point["status"] == 0:
                    result = analyze(ARCH, registers=usage.registers, shared_mem=usage.shared_mem,
                                     block_size=point["block"], dynamic_shared_mem=point["dynamic"])
                    assert result.active_blocks_per_sm == point["blocks"], (function["name"], point)
            compared += 1
    assert compared == 10


def test_a_corrupt_cupy_entry_is_reported_not_linted(tmp_path):
    source = next((ROOT / "cupy_cache").iterdir()).read_bytes()
    (tmp_path / "bad.cubin").write_bytes(source[:-8] + b"\0" * 8)
    result = read_directory(tmp_path)
    assert not result.records and "does not match its digest" in result.problems[0].message


def test_lint_dir_through_the_cli_json_has_the_variant_and_validates():
    jsonschema = pytest.importorskip("jsonschema")
    from tuneadvise.advisor.lint.schema import LINT_OUTPUT_SCHEMA

    result = CliRunner().invoke(cli, ["lint", str(CACHES["triton"]), "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    doc = json.loads(result.output)
    jsonschema.validate(doc, LINT_OUTPUT_SCHEMA)
    variants = [k["variant"] for k in doc["kernels"] if k["name"] == "matmul_kernel"]
    assert len(variants) == 10 and all(v.startswith("triton num_warps=") for v in variants)
    assert not any(f["code"] == "TA906" for k in doc["kernels"] for f in k["findings"])  # the launch is known
    text = CliRunner().invoke(cli, ["lint", str(CACHES["triton"])], env={"COLUMNS": "100"}).output
    assert "config triton num_warps=8, num_stages=4" in text and "(opted in)" in text


def test_bad_triton_metadata_is_one_line_and_exit_2(tmp_path):
    entry = next(p for p in CACHES["triton"].iterdir() if (p / "add_kernel.json").exists())
    (tmp_path / "add_kernel.cubin").write_bytes((entry / "add_kernel.cubin").read_bytes())
    meta = json.loads((entry / "add_kernel.json").read_text())
    for broken, words in (({**meta, "num_warps": "four"}, "'num_warps' must be a whole number"),
                          ({**meta, "name": "other"}, "no kernel named 'other'"), (None, "not JSON")):
        (tmp_path / "add_kernel.json").write_text("{" if broken is None else json.dumps(broken))
        result = CliRunner().invoke(cli, ["lint", str(tmp_path)])
        assert result.exit_code == 2 and words in result.output, result.output
        assert "Traceback" not in result.output


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["name", "num_warps", "shared", "num_ctas", "num_stages", "cluster_dims",
                                        "target", "maxnreg", "constants"]),
                       st.one_of(st.none(), st.booleans(), st.integers(-5, 1 << 33), st.text(max_size=5),
                                 st.lists(st.integers(-2, 70), max_size=4),
                                 st.dictionaries(st.text(max_size=4), st.integers(0, 100), max_size=3))))
def test_any_triton_metadata_is_read_or_refused_by_name(meta):
    try:
        entry = triton_entry(meta)
    except MetadataError as exc:
        assert str(exc)
        return
    launch = dict(entry["launch"])
    assert 32 <= launch["block_size"] <= 1024 and launch["dynamic_shared_mem"] >= 0


# ------------------------------------------------------------------------- analyze_compiled
def _triton_kernel(entry_dir: Path, name: str):
    """A stand-in for triton.compiler.CompiledKernel: what analyze_compiled reads of one."""
    return SimpleNamespace(metadata=json.loads((entry_dir / f"{name}.json").read_text()),
                           asm={"cubin": (entry_dir / f"{name}.cubin").read_bytes()})


@pytest.mark.parametrize("label, row", _triton_rows(), ids=lambda v: v["entry"][-40:] if isinstance(v, dict) else v)
def test_analyze_compiled_triton_equals_the_driver(label, row):
    path = CACHES[label] / row["entry"]
    result = analyze_compiled(_triton_kernel(path.parent, path.stem), arch=ARCH)
    assert result.kernel.registers == row["driver"]["attributes"]["num_regs"]
    assert result.active_blocks_per_sm == row["driver"]["launch"]["blocks"]
    assert result.kernel.block_size == row["block"] and result.kernel.dynamic_shared_mem == row["shared"]


def test_analyze_compiled_triton_takes_the_metadata_as_a_named_tuple_too():
    row = next(r for r in DRIVER["triton"] if r["shared"] > 49152 and r["driver"]["launch"]["blocks"])
    path = CACHES["triton"] / row["entry"]
    kernel = _triton_kernel(path.parent, path.stem)
    kernel.metadata = SimpleNamespace(**kernel.metadata)
    assert analyze_compiled(kernel, arch=ARCH).active_blocks_per_sm == row["driver"]["launch"]["blocks"]


def test_analyze_compiled_cupy_kernels_equal_the_driver():
    rows = DRIVER["cupy"]["live"]
    for row in rows:
        kernel = SimpleNamespace(name=row["name"], attributes=row["cupy_attributes"])  # RawKernel.attributes
        result = analyze_compiled(kernel, arch=ARCH, block_size=row["block"], dynamic_shared_mem=row["dynamic"])
        assert result.active_blocks_per_sm == row["driver"]["launch"]["blocks"], row["name"]
    assert len(rows) == 7


def test_analyze_compiled_cupy_cache_files_and_bytes():
    path = ROOT / "cupy_cache"
    for row in DRIVER["cupy"]["cache"]:
        for function in row["functions"]:
            launch = function["launch"]
            for obj in (path / row["entry"], (path / row["entry"]).read_bytes()):
                result = analyze_compiled(obj, arch=ARCH, block_size=launch["block"],
                                          dynamic_shared_mem=launch["dynamic"], kernel=function["name"])
                assert result.active_blocks_per_sm == launch["blocks"]


def test_analyze_compiled_numba_dispatchers_and_cubins_equal_the_driver():
    for row in DRIVER["numba"]:
        kernel = SimpleNamespace(regs_per_thread=row["regs_per_thread"], shared_mem_per_block=row["shared_mem_per_block"],
                                 local_mem_per_thread=row["local_mem_per_thread"],
                                 max_threads_per_block=row["max_threads_per_block"], entry_name=row["entry_name"])
        dispatcher = SimpleNamespace(overloads={row["signature"]: kernel}, py_func=SimpleNamespace(__name__="k"))
        expected = row["driver"]["launch"]["blocks"]
        assert analyze_compiled(dispatcher, arch=ARCH, block_size=row["block"]).active_blocks_per_sm == expected
        cubin = ROOT / "numba" / row["cubin"]
        result = analyze_compiled(cubin, arch=ARCH, block_size=row["block"])
        assert (result.kernel.registers, result.active_blocks_per_sm) == (row["driver"]["attributes"]["num_regs"], expected)


@pytest.mark.parametrize("obj, kwargs, field", [
    (object(), {}, "obj"),
    (ROOT / "numba" / "saxpy.cubin", {"arch": ARCH}, "block_size"),
    (ROOT / "cupy_cache" / DRIVER["cupy"]["cache"][2]["entry"], {"arch": ARCH, "block_size": 128}, "kernel"),
    (SimpleNamespace(overloads={}), {"arch": ARCH}, "obj"),
    (b"not a cubin", {"arch": ARCH, "block_size": 128}, "obj"),
    (ROOT / "numba" / "saxpy.cubin", {"arch": "sm_1", "block_size": 128}, "arch"),
])
def test_analyze_compiled_refuses_by_field(obj, kwargs, field):
    with pytest.raises((InputError, ValueError)) as caught:
        analyze_compiled(obj, **kwargs)
    assert getattr(caught.value, "field", "arch") == field


# ------------------------------------------------------------------------------------ prune
def test_prune_keeps_what_the_driver_launches_with_its_blocks():
    """Each recorded Triton configuration's resources, as an autotuner knows them after compiling."""
    rows = DRIVER["triton"]
    kept = prune(rows, ARCH, lambda r: {"registers": r["driver"]["attributes"]["num_regs"], "block_size": r["block"],
                                        "dynamic_shared_mem": r["shared"]})
    assert [p.config["entry"] for p in kept] == [r["entry"] for r in rows if r["driver"]["launch"]["blocks"]]
    assert all(p.active_blocks_per_sm == p.config["driver"]["launch"]["blocks"] for p in kept)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 255), st.integers(1, 1100), st.integers(0, 60000), st.integers(0, 240000),
       st.sampled_from([None, True, False]), st.sampled_from(["sm_90", "sm_80", "sm_75", "sm_120", "sm_61"]))
def test_prune_agrees_with_analyze(registers, block, static, dynamic, opt_in, arch):
    values = {"registers": registers, "block_size": block, "shared_mem": static, "dynamic_shared_mem": dynamic}
    if opt_in is not None:
        values["opt_in"] = opt_in
    kept = prune([values], arch, dict)
    resolved = shipped_catalog().resolve(arch).arch
    wanted = opt_in if opt_in is not None else static + dynamic > resolved.shared_mem_per_block and bool(resolved.shared_mem_opt_in)
    try:
        result = analyze(arch, registers=registers, block_size=block, shared_mem=static, dynamic_shared_mem=dynamic,
                         opt_in=wanted)
    except InputError:  # no architecture allows it (a block over 1024 threads): nothing launches
        assert kept == []
        return
    launches = result.launchable and result.active_blocks_per_sm > 0
    assert bool(kept) == launches
    if kept:
        assert (kept[0].active_blocks_per_sm, kept[0].occupancy) == (result.active_blocks_per_sm, result.occupancy)
        assert list(kept[0].limiters) == result.limiters


def test_prune_min_occupancy_and_bad_resources():
    configs = [{"registers": r, "num_warps": 4} for r in (32, 64, 128, 255)]
    assert [p.config["registers"] for p in prune(configs, ARCH, dict, min_occupancy=0.5)] == [32, 64]
    for bad, field in (({"num_warps": 4}, "registers"), ({"registers": 32}, "block_size"),
                       ({"registers": -1, "num_warps": 4}, "registers"), ({"registers": 32, "num_warps": 4, "x": 1}, "x"),
                       ({"registers": 32, "block_size": 128, "opt_in": "maybe"}, "opt_in"),
                       ({"registers": 32, "num_warps": "four"}, "num_warps")):
        with pytest.raises(InputError) as caught:
            prune([bad], ARCH, dict)
        assert caught.value.field == field and "config 0" in str(caught.value)


def test_triton_early_config_prune_adapter():
    from tuneadvise import triton_early_config_prune

    def config(m, warps, stages):
        return SimpleNamespace(kwargs={"BLOCK_M": m, "BLOCK_K": 64}, num_warps=warps, num_stages=stages)

    def resources(c, named_args):  # Hopper's pipeline: an A and a B tile per stage, fp16
        tile = c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_K"] * 2 * 2
        return {"registers": 128, "dynamic_shared_mem": tile * c.num_stages}

    configs = [config(m, w, s) for m in (128, 512) for w in (4, 8) for s in (3, 5)]
    hook = triton_early_config_prune(resources, arch=ARCH)
    kept = hook(configs, {"M": 1024})
    assert [(c.kwargs["BLOCK_M"], c.num_warps, c.num_stages) for c in kept] == \
        [(128, 4, 3), (128, 4, 5), (128, 8, 3), (128, 8, 5)]
    none_fit = [config(4096, 8, 8)]
    assert hook(none_fit, {}) == none_fit  # Triton then reports its own error


def test_kernel_tuner_restriction():
    from tuneadvise.advisor.prune import kernel_tuner_restriction

    can_launch = kernel_tuner_restriction(ARCH, lambda p: {"registers": 64, "block_size": p["block_size_x"] * p["block_size_y"],
                                                           "dynamic_shared_mem": p["tile"] * 4, "opt_in": False})
    assert can_launch({"block_size_x": 32, "block_size_y": 8, "tile": 4096})
    assert not can_launch({"block_size_x": 32, "block_size_y": 8, "tile": 16384})  # 64 KB without opt-in
    assert not can_launch({"block_size_x": 64, "block_size_y": 32, "tile": 16})  # 2048 threads


def test_import_tuneadvise_stays_light():
    import subprocess
    import sys

    code = ("import sys, tuneadvise; assert 'tuneadvise.advisor.compiled' not in sys.modules; "
            "assert 'tuneadvise.advisor.prune' not in sys.modules; tuneadvise.prune; "
            "assert 'tuneadvise.advisor.prune' in sys.modules; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "ok", out.stderr
    with pytest.raises(AttributeError):
        import tuneadvise
        tuneadvise.no_such_name  # noqa: B018


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["k.json", "k.cubin", "x.cubin", "y.so", "__grp__k.json", "z.o"]),
                          st.one_of(st.binary(max_size=300),
                                    st.builds(lambda b: b"0" * 40 + b"\x7fELF" + b, st.binary(max_size=200)),
                                    st.builds(lambda d: json.dumps(d).encode(),
                                              st.dictionaries(st.sampled_from(["name", "num_warps", "shared", "target"]),
                                                              st.one_of(st.integers(-3, 99999), st.text(max_size=3)))))),
                max_size=6))
def test_any_directory_is_read_or_refused_file_by_file(tmp_path_factory, files):
    folder = tmp_path_factory.mktemp("cache")
    for name, data in files:
        (folder / name).write_bytes(data)
    result = read_directory(folder)  # never raises
    assert all(p.message and p.file for p in result.problems)
    out = CliRunner().invoke(cli, ["lint", str(folder), "--arch", "sm_90"])
    assert out.exit_code in (0, 1, 2) and "Traceback" not in out.output


def test_lint_refuses_an_empty_directory_as_bad_input(tmp_path):
    result = CliRunner().invoke(cli, ["lint", str(tmp_path)])
    assert result.exit_code == 2, result.output


def test_a_baseline_keeps_each_variant(tmp_path):
    baseline = tmp_path / "baseline.json"
    runner = CliRunner()
    written = runner.invoke(cli, ["lint", str(CACHES["triton"]), "--baseline", str(baseline), "--update-baseline"])
    assert written.exit_code == 0, written.output
    assert sum(1 for key in json.loads(baseline.read_text())["kernels"] if key.startswith("matmul_kernel@")) == 10
    again = runner.invoke(cli, ["lint", str(CACHES["triton"]), "--baseline", str(baseline)])
    assert again.exit_code == 0, again.output


def test_the_driver_comparisons_detect_an_engine_off_by_one(monkeypatch):
    """The comparisons above can fail: with the engine one block short, lint DIR and
    analyze_compiled disagree with the driver wherever the driver's answer is above 0."""
    from ..probes.test_probes import engine_one_block_fewer

    engine_one_block_fewer(monkeypatch)
    expected = sum(row["driver"]["launch"]["blocks"] > 0 for _, row in _triton_rows())
    linted = {label: _linted(label)[1] for label in CACHES}
    lint_wrong = sum(linted[label][row["entry"]].result.active_blocks_per_sm != row["driver"]["launch"]["blocks"]
                     for label, row in _triton_rows())
    compiled_wrong = 0
    for label, row in _triton_rows():
        path = CACHES[label] / row["entry"]
        result = analyze_compiled(_triton_kernel(path.parent, path.stem), arch=ARCH)
        compiled_wrong += result.active_blocks_per_sm != row["driver"]["launch"]["blocks"]
    assert lint_wrong == compiled_wrong == expected == 18


def test_sarif_fingerprints_keep_variants_apart():
    result = CliRunner().invoke(cli, ["lint", str(CACHES["triton"]), "--format", "sarif", "--select", "TA302"])
    results = json.loads(result.output)["runs"][0]["results"]
    prints = [json.dumps(r.get("partialFingerprints"), sort_keys=True) for r in results]
    assert len(results) >= 10 and len(set(prints)) == len(prints)


def _pair(folder, name="k"):
    json_path = next(CACHES["triton"].glob("*/add_kernel.json"))
    (folder / f"{name}.cubin").write_bytes(json_path.with_suffix(".cubin").read_bytes())
    return json_path


@pytest.mark.parametrize("plant", ["json_to_dev_zero", "json_fifo", "cubin_to_dev_zero", "cubin_fifo", "so_fifo"])
def test_a_device_fifo_or_link_in_a_cache_is_refused_not_read(tmp_path, plant):
    """Reading /dev/zero behind a `.json` name once took all memory; opening a FIFO blocked for ever."""
    json_path = _pair(tmp_path)
    (tmp_path / "k.json").write_text(json_path.read_text())
    what, kind = plant.rsplit("_", 1) if plant.endswith("fifo") else (plant.split("_to_")[0], "zero")
    target = tmp_path / ("x.so" if what == "so" else f"k.{what}")
    if target.exists():
        target.unlink()
    if kind == "fifo":
        os.mkfifo(target)
    else:
        os.symlink("/dev/zero", target)
    result = read_directory(tmp_path)
    assert any(p.file == str(target) and "not a regular file" in p.message for p in result.problems), result.problems
    out = CliRunner().invoke(cli, ["lint", str(tmp_path)])
    assert out.exit_code == 2 and "not a regular file" in out.output


@pytest.mark.parametrize("arch", ["sm_²³", "sm_९०", "sm_", "sm_9999", "sm_90x"])
def test_an_arch_of_non_ascii_digits_is_not_an_arch(arch):
    assert triton_entry({"name": "k", "num_warps": 4, "target": {"arch": arch}})["arch"] is None


_JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-(1 << 70), 1 << 70), st.floats(),
                               st.text(max_size=6)),
                     lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner,
                                                                                        max_size=3)), max_leaves=8)
_KEYS = ["name", "num_warps", "shared", "num_ctas", "num_stages", "cluster_dims", "maxnreg", "constants", "target"]


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(_KEYS), _JSON, max_size=9), st.booleans())
def test_hostile_metadata_beside_a_real_cubin_is_linted_or_named(tmp_path_factory, meta, real_name):
    """Any JSON values for the metadata's fields: one problem naming the file, or a lint of the kernel."""
    folder = tmp_path_factory.mktemp("cache")
    _pair(folder)
    if real_name:
        meta["name"] = "add_kernel"
    (folder / "k.json").write_text(json.dumps(meta))
    result = read_directory(folder)  # never raises
    assert all(p.file and p.message and "\n" not in p.message for p in result.problems)
    out = CliRunner().invoke(cli, ["lint", str(folder), "--format", "json"])
    assert out.exit_code in (0, 1, 2), out.output
    assert out.exception is None or isinstance(out.exception, SystemExit), repr(out.exception)
