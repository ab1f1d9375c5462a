"""Hostile inputs of doubling size, each through the CLI in its own process:
time must grow linearly (a ratio near 2 per doubling, not 4) and peak memory
stay bounded, for every kind of input the tool reads (issue 20).

    python benchmarks/adversarial.py [--steps 4] [--scale 1] [--timeout 60] [--kinds ptxas,cubin,...]

The newer surfaces (YAML tags, compile_commands.json, long quoted values, --cuda, a report
written through a pipe) are their own group of kinds, after the first.

Each kind is a shape found to be slow or large before (a long line, a
decompression bomb, a header that claims more than the file holds, nesting
that expands); its generator makes an input of about `size` bytes. Each run is
`python -m tuneadvise.cli ...` with the input, timed from inside the child
around the command (start-up excluded) and measured by the peak resident
memory of the child or any process it started. Printed: kind, the input sizes, seconds per size, the ratio
of each doubling's time to the last (the median of them), peak MB, the exit
codes seen (2 is the expected one-line refusal of bad input), and a verdict: `linear` when no ratio is above 3 (timer noise on tiny times is
ignored under 50 ms), `SUPERLINEAR` otherwise, `TIMEOUT` when a run exceeds
--timeout, `MEMORY` over 500 MB. Set PYTHONPATH to time another checkout.
"""

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "lint"
MEMORY_LIMIT_MB = 500

# The child: run the CLI in-process, then report seconds and peak RSS on stderr's last line.
CHILD = textwrap.dedent("""
    import json, resource, sys, time
    from tuneadvise.cli.main import cli
    stdin = sys.argv[1]
    if stdin != "-":
        sys.stdin = open(stdin, encoding="utf-8", errors="surrogateescape")
    start = time.perf_counter()
    try:
        cli.main(args=sys.argv[2:], prog_name="tuneadvise")
        code = 0
    except SystemExit as exc:
        code = exc.code
    except BaseException as exc:
        code = type(exc).__name__
    seconds = time.perf_counter() - start
    # This process's own high-water mark: ru_maxrss also counts the benchmark's memory, which a
    # vfork-and-exec child inherits as its starting maximum (hundreds of MB after a large input).
    try:
        with open("/proc/self/status") as status:
            own = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    peak = max(own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024  # KiB; children: the demangler
    sys.stderr.write("\\n" + json.dumps({"seconds": seconds, "peak_mb": peak, "code": code}) + "\\n")
""")


# -- generators: (file name, bytes) and the command line ----------------------

def ptxas_long_line(size):
    return "log", ("ptxas info    : Compiling entry function '_Z1kv' for 'sm_90'\n"
                   "ptxas info    : Function properties for _Z1kv\n"
                   f"    {'9' * size} bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                   "ptxas info    : Used 32 registers\n").encode(), ["lint", "{file}", "--format", "json"]


def ptxas_many_kernels(size):
    one = ("ptxas info    : Compiling entry function '_Z6kernelPfi' for 'sm_90'\n"
           "ptxas info    : Function properties for _Z6kernelPfi\n"
           "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
           "ptxas info    : Used 32 registers, used 0 barriers, 380 bytes cmem[0]\n")
    lines = []
    for i in range(max(1, size // len(one))):
        lines.append(one.replace("_Z6kernelPfi", f"_Z{len(f'k{i}')}k{i}Pfi"))
    return "log", "".join(lines).encode(), ["lint", "{file}", "--format", "json"]


def diff_many_kernels(size):
    """diff of a large build against itself: memory must stay near lint's, not two whole reports."""
    suffix, data, _ = ptxas_many_kernels(size)
    return suffix, data, ["diff", "{file}", "{file}", "--format", "json"]


def cuobjdump_long_line(size):
    return "txt", (f"Fatbin elf code:\n================\narch = sm_90\n\nResource usage:\n"
                   f" Function _Z1kv:\n  REG:1 SHARED:0 {'A' * size}\n").encode(), ["lint", "{file}", "--format", "json"]


def elf_header(size, shentsize=0, shnum=65535):
    data = bytearray(size)
    data[:20] = b"\x7fELF\x02\x01\x01" + b"\0" * 9 + b"\x01\x00\xbe\x00"
    struct.pack_into("<Q", data, 40, 64)
    struct.pack_into("<HHH", data, 58, shentsize, shnum, 0)
    return bytes(data)


def cubin_section_claims(size):
    return "cubin", elf_header(size), ["lint", "{file}", "--format", "json"]


def cubin_overlapping_info(size):
    # As many section headers as fit, all over one .nv.info.k section of valid records.
    shnum = min(65535, size // 128)
    shoff = size - 64 * shnum
    data = bytearray(elf_header(size, 64, shnum))
    struct.pack_into("<Q", data, 40, shoff)
    names = b"\0.nv.info.k\0"
    data[64:64 + len(names)] = names
    body = (shoff - 128) // 4 * 4
    data[128:128 + body] = b"\x02\x99\x00\x00" * (body // 4)
    struct.pack_into("<IIQQQQIIQQ", data, shoff, 0, 3, 0, 0, 64, len(names), 0, 0, 0, 0)
    for i in range(1, shnum):
        struct.pack_into("<IIQQQQIIQQ", data, shoff + 64 * i, 1, 0x70000000, 0, 0, 128, body, 0, 0, 0, 0)
    return "cubin", bytes(data), ["lint", "{file}", "--format", "json"]


def _fatbin(stored: bytes, declared: int, flags: int) -> bytes:
    entry = struct.pack("<HHIQIIHHIIIQQQ", 2, 0x101, 64, len(stored), len(stored), 0, 0, 0, 90, 0, 0, flags, 0, declared)
    body = entry + stored
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def fatbin_lz4_run(size):
    # One literal, one match of offset 1 as long as `size` bytes of 255s say, 12 literals.
    run = 19 + 255 * size
    block = bytes([0x1F, 0x41, 0x01, 0x00]) + b"\xff" * size + bytes([0, 0xC0]) + b"B" * 12
    return "fatbin", _fatbin(block, run + 13, 0x2000), ["lint", "{file}", "--format", "json"]


def fatbin_zstd_bomb(size):
    # A frame of `size` KiB x 32 of zeros (about `size` bytes compressed), declared as 100 bytes,
    # eight times over.
    import zstandard

    frame = zstandard.ZstdCompressor().compress(bytes(size * 32 * 1024))
    entries = b"".join(_fatbin(frame, 100, 0x8000)[16:] for _ in range(8))
    return "fatbin", struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(entries)) + entries, ["lint", "{file}", "--format", "json"]


def source(text):
    def make(size):
        return "cu", (text * (size // len(text) + 1))[:size].encode(), ["check-source", "{file}", "--target", "sm_90"]
    return make


def source_unfinished_declarations(size):
    # `lint log k.cu`: `template<> __global__` lines with no name, body or semicolon (each
    # declaration was once read on for 2,000 characters).
    return "cu", (b"template<> __global__\n" * (size // 22 + 1))[:size], [
        "lint", str(FIXTURES / "ptxas_sm_90.log"), "{file}", "--format", "json"]


def compile_volatile(size):
    # `lint k.cu --arch sm_80`: nvcc prints the whole line with each of its warnings (quadratic output).
    return "cu", (b"volatile " * (size // 9 + 1))[:size], ["lint", "{file}", "--arch", "sm_80", "--no-cache",
                                                           "--format", "json"]


def source_index(size):
    # `lint log k.cu`: a source of `template<> __global__` lines beside a one-kernel log.
    line = "template<> __global__ void k<int>(int*);\n"
    return "cu", (line * (size // len(line) + 1)).encode(), ["lint", str(FIXTURES / "ptxas_sm_90.log"), "{file}",
                                                             "--format", "json"]


def yaml_aliases(size):
    # The billion-laughs shape, widened to `size` bytes.
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 9):
        lines.append(f"{chr(97 + i)}: &{chr(97 + i)} [{','.join(['*' + chr(96 + i)] * 9)}]")
    text = "\n".join(lines) + "\n"
    text += "".join(f"k{i}: *i\n" for i in range(max(0, (size - len(text)) // 8)))
    return "yaml", text.encode(), ["lint", str(FIXTURES / "ptxas_sm_90.log"), "--config", "{file}", "--format", "json"]


def toml_config(size):
    entry = '[[kernels]]\nname = "k*"\nblock_size = 256\n'
    return "toml", (entry * max(1, size // len(entry))).encode(), \
        ["lint", str(FIXTURES / "ptxas_sm_90.log"), "--config", "{file}", "--format", "json"]


def json_config(size):
    entry = {"name": "k*", "block_size": 256}
    count = max(1, size // 40)
    return "json", json.dumps({"kernels": [entry] * count}).encode(), \
        ["lint", str(FIXTURES / "ptxas_sm_90.log"), "--config", "{file}", "--format", "json"]


def batch_lines(size):
    line = '{"arch": "sm_90", "registers": 32, "block_size": 256}\n'
    return "jsonl", (line * max(1, size // len(line))).encode(), ["occupancy", "--batch", "-", "__stdin__"]


def batch_long_number(size):
    return "jsonl", ('{"arch": "sm_90", "registers": ' + "9" * size + ', "block_size": 256}\n').encode(), \
        ["occupancy", "--batch", "-", "__stdin__"]


def mangled_name(depth, function="f"):
    """A template argument list that refers back to the previous one twice, `depth` times: the
    demangled name doubles with each level (24 levels, 265 bytes: 436 MB and 4.4 s unbounded)."""
    def b36(n):
        digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
        text = ""
        while True:
            text, n = digits[n % 36] + text, n // 36
            if not n:
                return text
    return f"_Z{len(function)}{function}1BI1AS0_E" + "".join(f"1BIS{b36(2 * i - 1)}_S{b36(2 * i - 1)}_E"
                                                            for i in range(1, depth + 1))


def mangled_nesting(depth):
    name = mangled_name(depth)
    return "log", (f"ptxas info    : Compiling entry function '{name}' for 'sm_90'\n"
                   f"ptxas info    : Function properties for {name}\n"
                   "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                   "ptxas info    : Used 32 registers\n").encode(), ["lint", "{file}", "--format", "json"]


def mangled_names_many(count):
    # `count` distinct names of 24 nested levels (each 0.5 s or more for the runtime's demangler alone):
    # they share one time budget, so the total stays flat.
    lines = []
    for i in range(count):
        name = mangled_name(24, f"f{i}")
        lines.append(f"ptxas info    : Compiling entry function '{name}' for 'sm_90'\n"
                     "ptxas info    : Used 32 registers\n")
    return "log", "".join(lines).encode(), ["lint", "{file}", "--format", "json"]


# kind: (generator, first size, how sizes grow)
KINDS = {
    "ptxas long line": (ptxas_long_line, 10_000, "double"),
    "ptxas many kernels": (ptxas_many_kernels, 200_000, "double"),
    "diff many kernels": (diff_many_kernels, 12_500_000, "double"),
    "cuobjdump long line": (cuobjdump_long_line, 10_000, "double"),
    "cubin section claims": (cubin_section_claims, 4096, "double"),
    "cubin overlapping sections": (cubin_overlapping_info, 32_768, "double"),
    "fatbin lz4 run": (fatbin_lz4_run, 50_000, "double"),
    "fatbin zstd bomb x8": (fatbin_zstd_bomb, 4096, "double"),
    "check-source volatile": (source("volatile "), 22_500, "double"),
    "check-source comments": (source("/* "), 22_500, "double"),
    "check-source legacy intrinsics": (source("__shfl("), 50_000, "double"),
    "check-source raw strings": (source('R"('), 50_000, "double"),
    "source unfinished declarations": (source_unfinished_declarations, 50_000, "double"),
    "compile volatile (nvcc)": (compile_volatile, 20_000, "double"),
    "source index templates": (source_index, 40_000, "double"),
    "config yaml aliases": (yaml_aliases, 4_000, "double"),
    "config toml": (toml_config, 50_000, "double"),
    "config json": (json_config, 50_000, "double"),
    "batch lines": (batch_lines, 100_000, "double"),
    "batch long number": (batch_long_number, 5_000, "double"),
    "mangled name nesting": (mangled_nesting, 22, "plus2"),
    "mangled names many": (mangled_names_many, 4, "double"),
}


# -- files and outputs of the newer surfaces: YAML tags, compile_commands.json, long quoted
# -- values, --cuda, and a report written through a pipe (-o /dev/stdout) --------------------

def yaml_tagged_values(size):
    # Tagged values a constructor cannot read, `size` bytes of them: refused at the first, at once.
    line = "- !!timestamp 2001-12-14t21:59:xx.10-05:00\n"
    return "yaml", ("ignore:\n" + line * max(1, size // len(line))).encode(), \
        ["lint", str(FIXTURES / "ptxas_sm_90.log"), "--config", "{file}", "--format", "json"]


def compile_commands_entries(size):
    # Entries that each give a problem (a NUL byte, no architecture), about `size` bytes of them.
    entries = [{"directory": ".", "file": f"k{i}\0.cu" if i % 2 else f"k{i}.cu", "arguments": ["nvcc", "-c", f"k{i}.cu"]}
               for i in range(max(1, size // 70))]
    return "json", json.dumps(entries).encode(), ["lint", "--compile-commands", "{file}", "--format", "json"]


def compile_commands_long_name(size):
    name = "a" * size + ".cu"
    return "json", json.dumps([{"directory": ".", "file": name, "arguments": ["nvcc", "-c", name]}]).encode(), \
        ["lint", "--compile-commands", "{file}"]


def batch_long_arch(size):
    return "jsonl", json.dumps({"arch": "x" * size, "registers": 32, "block_size": 256}).encode() + b"\n", \
        ["occupancy", "--batch", "-", "__stdin__"]


def cuda_long_release(size):
    return "txt", b"", ["occupancy", "--arch", "sm_90", "-r", "32", "-b", "256", "--cuda", "1" * size]


def report_through_a_pipe(size):
    # `lint big.log -o /dev/stdout | ...`: the report streams into the pipe the child's stdout is.
    _, data, _ = ptxas_many_kernels(size)
    return "log", data, ["lint", "{file}", "-o", "/dev/stdout"]


KINDS.update({
    "config yaml tagged values": (yaml_tagged_values, 50_000, "double"),
    "compile_commands problems": (compile_commands_entries, 50_000, "double"),
    "compile_commands long name": (compile_commands_long_name, 5_000, "double"),
    "batch long arch": (batch_long_arch, 25_000, "double"),
    "--cuda long value": (cuda_long_release, 5_000, "double"),
    "lint -o /dev/stdout (a pipe)": (report_through_a_pipe, 200_000, "double"),
})

def run_one(kind: str, size: int, timeout: float, folder: Path) -> dict:
    generator = KINDS[kind][0]
    suffix, data, args = generator(size)
    path = folder / f"input.{suffix}"
    path.write_bytes(data)
    stdin = str(path) if "__stdin__" in args else "-"
    args = [str(path) if a == "{file}" else a for a in args if a != "__stdin__"]
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, stdin, *args], stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
                              env={**os.environ, "NO_COLOR": "1"})
    except subprocess.TimeoutExpired:
        return {"bytes": len(data), "seconds": None, "peak_mb": None, "code": "timeout"}
    try:
        report = json.loads(done.stderr.decode("utf-8", "replace").strip().splitlines()[-1])
    except (ValueError, IndexError):
        report = {"seconds": None, "peak_mb": None, "code": f"died ({done.returncode})"}
    report["bytes"] = len(data)
    return report


def verdict(rows) -> tuple[str, str]:
    if any(r["seconds"] is None for r in rows):
        return "-", "TIMEOUT" if any(r["code"] == "timeout" for r in rows) else "CRASH"
    ratios = [b["seconds"] / a["seconds"] for a, b in zip(rows, rows[1:]) if b["seconds"] >= 0.05 and a["seconds"] > 0]
    ratio_text = f"{sorted(ratios)[len(ratios) // 2]:.1f}" if ratios else "-"
    if max(r["peak_mb"] for r in rows) > MEMORY_LIMIT_MB:
        return ratio_text, "MEMORY"
    return ratio_text, "SUPERLINEAR" if any(r > 3 for r in ratios) else "linear"


def peaks_by_size(kind: str, rows) -> str:
    """Peak memory at each size, for a kind whose memory must stay flat as its input doubles (diff)."""
    figures = ", ".join(f"{human(r['bytes'])}: {r['peak_mb']:.0f} MB" for r in rows if r["peak_mb"] is not None)
    return f"{'':<32} peak at each size: {figures}"


def human(size: int) -> str:
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.0f}{unit}"
    return str(size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=4, help="sizes per kind, each double the last (default 4)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every first size")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before a run counts as a hang")
    parser.add_argument("--kinds", help="comma-separated kind names (default: all); see KINDS")
    options = parser.parse_args()
    kinds = [k.strip() for k in options.kinds.split(",")] if options.kinds else list(KINDS)
    print(f"{'input kind':<32} {'sizes (bytes)':<24} {'seconds':<30} {'ratio':>5} {'peak MB':>8}  {'exit':<6} verdict")
    with tempfile.TemporaryDirectory() as folder:
        for kind in kinds:
            _, first, growth = KINDS[kind]
            first = max(1, int(first * options.scale)) if growth == "double" else first
            sizes = [first * 2 ** i if growth == "double" else first + 2 * i for i in range(options.steps)]
            rows = []
            for size in sizes:
                rows.append(run_one(kind, size, options.timeout, Path(folder)))
                if rows[-1]["seconds"] is None:
                    break  # a larger one would only take longer
            ratio, word = verdict(rows)
            times = " ".join("-" if r["seconds"] is None else f"{r['seconds']:.2f}" for r in rows)
            peak = max((r["peak_mb"] or 0) for r in rows)
            codes = ",".join(sorted({str(r["code"]) for r in rows}))
            print(f"{kind:<32} {' '.join(human(r['bytes']) for r in rows):<24} {times:<30} {ratio:>5} {peak:>8.0f}  "
                  f"{codes:<6} {word}", flush=True)
            if kind == "diff many kernels":
                print(peaks_by_size(kind, rows), flush=True)


if __name__ == "__main__":
    main()
