"""NVIDIA's compiler for the compile-in-the-loop tests, and its own resource report read
independently of tuneadvise's reader (the outside truth the tests compare with).

The toolchain is the `[nvcc]` extra's (pip install -e '.[test,nvcc,host,cuda-libs]', as .ci/run does),
CUDA_HOME's or PATH's. Where none is found the extra's pinned wheels are installed into
the test cache directory (never into the repository) and used from there; only when that
fails too is the toolchain Unavailable, which the tests turn into a skip with the reason,
or into a failure where TUNEADVISE_REQUIRE_REFERENCE=1 (as in CI).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

from tuneadvise.advisor.toolchain.discovery import Toolchain, ToolchainMissing, find_toolchain

from .header import Unavailable, cache_dir

ROOT = Path(__file__).resolve().parents[2]


def extra_requirements() -> list[str]:
    """The `[nvcc]` extra's requirements, from pyproject.toml (their one home)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return list(project["optional-dependencies"]["nvcc"])


def toolchain() -> Toolchain:
    try:
        return find_toolchain()
    except ToolchainMissing:
        pass
    target = cache_dir() / "nvcc-extra"
    bin_dir = target / "nvidia" / "cu13" / "bin"
    if not (bin_dir / "nvcc").exists():
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--target", str(target),
                               *extra_requirements()], capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            raise Unavailable(f"the [nvcc] extra could not be installed: {proc.stderr.strip().splitlines()[-1:]}")
    nvcc, ptxas = bin_dir / "nvcc", bin_dir / "ptxas"
    if not (nvcc.exists() and ptxas.exists()):
        raise Unavailable(f"the [nvcc] extra installed no nvcc/ptxas under {bin_dir}")
    return Toolchain(str(nvcc), str(ptxas), "test cache")


# ptxas -v, read with nothing from tuneadvise: one dict per kernel.
_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(sm_\w+)'")
_PROPERTIES = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")


def read_report(log: str) -> dict[str, dict]:
    kernels, name, props = {}, None, None
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            name, props = m.group(1), None
        elif m := _PROPERTIES.search(line):
            props = tuple(map(int, m.groups()))
        elif (m := _USED.search(line)) and name is not None:
            smem = _SMEM.search(line)
            stack, stores, loads = props
            kernels[name] = {"registers": int(m.group(1)), "shared_mem": int(smem.group(1)) if smem else 0,
                             "spill_stores": stores, "spill_loads": loads, "stack_frame": stack}
            name = None
    return kernels


def ptxas_report(chain: Toolchain, source: Path, arch: str, *flags: str, cwd: Path | None = None) -> dict[str, dict]:
    """nvcc -cubin -arch=ARCH FLAGS -Xptxas -v SOURCE, as a user runs it: {kernel: figures}."""
    with tempfile.TemporaryDirectory() as scratch:
        proc = subprocess.run([chain.nvcc, "-cubin", f"-arch={arch}", *flags, "-Xptxas", "-v", str(source),
                               "-o", str(Path(scratch) / "k.cubin")], capture_output=True, text=True, timeout=600,
                              cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return read_report(proc.stdout + proc.stderr)


def ptxas_ptx_report(chain: Toolchain, ptx: Path, arch: str, cap: int | None) -> dict[str, dict]:
    """ptxas -arch=ARCH -v [--maxrregcount N] FILE.ptx: {kernel: figures}."""
    cap_flags = ["--maxrregcount", str(cap)] if cap is not None else []
    proc = subprocess.run([chain.ptxas, f"-arch={arch}", "-v", *cap_flags, str(ptx), "-o", "/dev/null"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return read_report(proc.stdout + proc.stderr)


def compile_cubin(chain: Toolchain, source: Path, arch: str, *flags: str) -> tuple[dict[str, dict], bytes]:
    """nvcc -cubin -arch=ARCH FLAGS -Xptxas -v SOURCE: ptxas's report ({kernel: figures}) and the cubin."""
    with tempfile.TemporaryDirectory() as scratch:
        cubin = Path(scratch) / "k.cubin"
        proc = subprocess.run([chain.nvcc, "-cubin", f"-arch={arch}", *flags, "-Xptxas", "-v", str(source),
                               "-o", str(cubin)], capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        return read_report(proc.stdout + proc.stderr), cubin.read_bytes()


def nvdisasm(chain: Toolchain) -> str:
    """The disassembler where tuneadvise looks, else beside the compiler (the [nvcc] extra
    installs both into one folder, the test cache's too)."""
    from tuneadvise.advisor.toolchain.disassembler import DisassemblerMissing, find_disassembler

    try:
        return find_disassembler().path
    except DisassemblerMissing:
        pass
    path = Path(chain.nvcc).parent / "nvdisasm"
    if not path.exists():
        raise Unavailable(f"no nvdisasm beside {chain.nvcc}: the [nvcc] extra installs it")
    return str(path)


def installed() -> tuple[Toolchain, str]:
    """The compiler and disassembler where tuneadvise itself looks (the [nvcc] extra, CUDA_HOME,
    PATH), for tests that run `lint FILE.cu`: tuneadvise does not look in the test cache."""
    from tuneadvise.advisor.toolchain.disassembler import DisassemblerMissing, find_disassembler

    try:
        return find_toolchain(), find_disassembler().path
    except (ToolchainMissing, DisassemblerMissing) as exc:
        raise Unavailable(f"{exc} (the [nvcc] extra installs both)") from None


def nvdisasm_line_table(disassembler: str, cubin: Path) -> dict[str, list[tuple[int, str, int]]]:
    """nvdisasm's own line table, from its JSON listing (`-json -g`), read with nothing from
    tuneadvise: {kernel: [(offset, file name, line)]} at each instruction that starts a line.
    Every instruction of sm_70 and later is 16 bytes, so an instruction's offset is 16 times its index."""
    import json

    proc = subprocess.run([disassembler, "-json", "-g", str(cubin)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    _, functions, *rest = json.loads(proc.stdout)
    files = [entry["file"] for entry in rest[0]["files"]] if rest else []
    table = {}
    for function in functions:
        rows = []
        for index, instruction in enumerate(function["sass-instructions"]):
            if "source-line" in instruction:
                rows.append((16 * index, files[instruction["source-file-id"]], instruction["source-line"]))
        table[function["function-name"]] = rows
    return table
