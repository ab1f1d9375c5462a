"""Fuzz campaign (issue 20): N generated inputs through the CLI and the library,
checked against the reliability contract, with counts and figures printed.

    python benchmarks/fuzz.py [--count 100000] [--workers 2] [--subprocess-every 500] [--seed 1]
                              [--failures fuzz-failures.jsonl]

Inputs: argument vectors built from each click command's own parameters
(valid values half the time, on top of a valid command line, and values of
every shape otherwise), files that are the real fixtures of tests/fixtures
mutated (bytes flipped, inserted, deleted, repeated, truncated, two files
spliced; JSON/YAML documents mutated node by node, TOML value by value),
structured build output with random figures and names, batch lines of random
JSON, YAML configs with tags, anchors and values their constructors refuse,
compile_commands.json entries holding NUL bytes, names of thousands of
characters and flags that write or skip the compile, arbitrary bytes; stdin of
any bytes; output paths that are regular files, new paths, a directory,
/dev/null, a FIFO (drained), an anonymous pipe as /dev/fd/N (drained, as
`>(cat)` gives one), /dev/stdout, a closed or read-only descriptor, /proc,
symlinks to a file and to /dev/null; sometimes a tuneadvise.toml or
pyproject.toml in the working directory, TUNEADVISE_FORMAT set. Options
(--cuda, --bytes-in-flight, --virtual-resources, max-dynamic-smem's) come from
each command's own parameters. A share of inputs goes to library calls
directly (readers, parsers, config and spec loading, the batch, the demangler,
the catalog's resolve, compile_commands loading).

Most inputs run in-process (click's CliRunner) with a per-input alarm; one in
--subprocess-every runs as `python -m tuneadvise.cli` in its own process,
timed and measured (peak RSS from wait4) — a sample of those with stdout on
/dev/full or closed.

Checked for every input: no traceback (and no internal error, exit 70); the
exit code within the documented set (0, 1, 2, 3, 74, 130, 141; library calls:
only their documented exceptions); no error line over 500 characters (a
`tuneadvise:` line, a batch line's error message, a library error's message);
under 5 s for an input under 1 MB; peak
memory under 500 MB (in-process: the worker's peak RSS may not cross it;
subprocesses: each child's own); no path other than a regular file replaced
(every non-regular output path keeps its type and target). Printed: inputs
per target, exit codes, failures per check, the slowest input and the peaks,
inputs per second. Each failure is written to --failures with what
reproduces it, and its wall and CPU seconds: on a shared machine the wall
time of a slow input is also the load's.
"""

from __future__ import annotations

import argparse
import base64
import collections
import json
import multiprocessing
import os
import random
import resource
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
DOCUMENTED = {0, 1, 2, 3, 74, 130, 141}
TIME_LIMIT_S = 5.0
MEMORY_LIMIT_MB = 500
ALARM_S = 60  # an in-process input still running after this is stopped and counted as a hang
LIBRARY_SHARE = 0.25

SEEDS = sorted(p for p in (FIXTURES / "lint").iterdir() if p.is_file()) + [
    FIXTURES / "h100" / "native.toml", FIXTURES / "h100" / "probe_quick.json", FIXTURES / "devices" / "device_query.toml",
    ROOT / "specs" / "data" / "volta.toml", ROOT / "specs" / "data" / "hopper.toml",
    ROOT / "docs" / "examples" / "roofline-kernels.toml"]
SEEDS = [p for p in SEEDS if p.stat().st_size < (4 << 20)]
SUFFIXES = [".log", ".txt", ".toml", ".yaml", ".yml", ".json", ".jsonl", ".cu", ".cuh", ".cubin", ".o", ".so",
            ".fatbin", ".ptx", ".sarif", ".svg", ".png", ""]

WORDS = ["", " ", "-", "0", "1", "-1", "32", "256", "1024", "16x16", "32,8,2", "2x2x2x2", "12K", "1.5K", "99K", "1G",
         "1e3", "1e400", "-1e400", "nan", "inf", "-inf", "1e-320", "0x10", "9" * 5000, "1" + "0" * 400, "default",
         "max-l1", "50%", "true", "no", "sm_90", "sm_90a", "volta", "hopper", "9.0", "compute_70", "h100-sxm",
         "v100-pcie", "sm_1", "sm_9999", "native", "TA3", "TA106", "ta9", "TA999", "occupancy-cliff", "table", "json",
         "jsonl", "sarif", "markdown", "error", "warning", "all", "a\nb", "\t", "é", "x" * 300, "../", "~", "$HOME",
         "%s%n", "{}", "[]", "null", "1,2,3,4", "0.0", "-0", "1_000", "٣", "𝟗"]
VALID = {
    "arch": ["sm_90", "volta", "h100-sxm", "8.6", "sm_120", "v100-pcie", "hopper", "sm_75", "a100-sxm", "sm_53"],
    "registers": ["32", "64", "255", "0", "128"], "block_size": ["256", "16x16", "1024", "32,8,2", "96", "1"],
    "shared_mem": ["0", "12K", "48K", "100000"], "dynamic_shared_mem": ["0", "16K", "100K", "227K"],
    "carveout": ["default", "max-l1", "50", "max-shared"], "barriers": ["1", "16", "0"],
    "max_threads_per_block": ["256", "1024", "64"], "grid_size": ["1000", "1", "132", "65536"],
    "sm_count": ["132", "80", "1"], "cluster_size": ["2", "8", "16"], "compiled_for": ["sm_70", "sm_90", "sm_80"],
    "spill_stores": ["0", "64"], "spill_stores__alias": ["8"], "spill_loads": ["0", "64"], "stack_frame": ["0", "400"],
    "target": ["sm_70", "volta", "6.0", "sm_90"], "select": ["TA3", "TA1,TA9", "TA301", "TA8"],
    "ignore": ["TA906", "TA5", "TA3"], "min_occupancy": ["0.5", "0.9", "1"], "flops": ["2.1T", "1e9"],
    "bytes_": ["800G", "1e9"], "intensity": ["2", "0.25", "100"], "shared_bytes_per_flop": ["6", "0.5"],
    "achieved": ["1.2T", "5e11"], "only": ["compute", "dram,l2"], "device": ["0", "all"],
    "code": ["TA301", "registers-per-thread", "ta106", "TA906"], "dynamic_shared_mem_per_thread": ["64", "0"],
    "dynamic_shared_mem_base": ["1K"], "precision": ["fp32", "fp64", "fp16"], "severity": ["error", "info"],
    "cuda": ["13.5", "12.9", "13.0", "12.0", "11.8", "13", "13.5.1"], "virtual_resources": ["0", "1", "2", "128"],
    "bytes_in_flight": ["64", "16K", "1e6", "0"], "blocks_per_sm": ["1", "2", "4", "64"],
}
BASE = {
    "occupancy": ["--arch", "sm_90", "-r", "32", "-b", "256"], "suggest": ["--arch", "h100-sxm", "-r", "32"],
    "roofline": ["--arch", "h100-sxm", "--intensity", "2"], "check-source": ["-t", "sm_70"],
    "max-dynamic-smem": ["--arch", "sm_90", "-r", "32", "-b", "256"],
}
SEEDS_FOR = {
    "config_file": [FIXTURES / "lint" / "driver_lint.toml", ROOT / "docs" / "examples" / "roofline-kernels.toml",
                    "yaml", "yaml"],
    "compile_commands": ["compile_commands"],
    "kernels_path": [ROOT / "docs" / "examples" / "roofline-kernels.toml"],
    "spec_file": [FIXTURES / "h100" / "native.toml", ROOT / "specs" / "data" / "volta.toml"],
    "probe_path": [FIXTURES / "h100" / "probe_quick.json"],
    "batch": ["batch"],
    "paths": ["source"],
}
OUTPUT_OPTIONS = {"output", "save", "plot", "baseline"}
MAX_ERROR_LINE = 500  # characters of one error line (stderr, or a batch line's error message)


# -- generated files ------------------------------------------------------------------

def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        if not buffer:
            buffer += rng.randbytes(rng.randint(1, 32))
            continue
        at = rng.randrange(len(buffer))
        kind = rng.random()
        if kind < 0.3:
            buffer[at] = rng.randrange(256)
        elif kind < 0.5:
            buffer[at:at] = rng.choice([rng.randbytes(rng.randint(1, 16)), b"\xff", b"\0", b"\n", b"9" * 30,
                                        b"-1", b" ", b"\r\n", "é".encode()])
        elif kind < 0.65:
            del buffer[at:at + rng.randint(1, 64)]
        elif kind < 0.8:
            piece = buffer[at:at + rng.randint(1, 256)]
            buffer[at:at] = piece * rng.randint(1, 20)
        elif kind < 0.9:
            del buffer[at:]
        else:
            other = rng.choice(SEEDS).read_bytes()
            if other:
                start = rng.randrange(len(other))
                buffer[at:at] = other[start:start + rng.randint(1, 4096)]
    return bytes(buffer)


def random_json(rng: random.Random, depth: int = 0):
    kind = rng.random()
    if depth > 3 or kind < 0.55:
        return rng.choice([None, True, False, 0, -1, 1, 32, 256, 2**31, 2**64, -2**63, 1e308, -0.0, 0.5, 1e-320,
                           rng.randint(-10**6, 10**6), rng.random() * 10**rng.randint(-5, 20), rng.choice(WORDS),
                           "".join(chr(rng.randrange(32, 0x2FF)) for _ in range(rng.randint(0, 8)))])
    if kind < 0.8:
        return [random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(["name", "kernel", "arch", "value", "block_size", "registers", "x", "kernels", "budgets",
                        rng.choice(WORDS)]): random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def mutate_tree(rng: random.Random, tree):
    """Replace, drop or add one node of a parsed JSON/YAML document."""
    if isinstance(tree, dict) and tree and rng.random() < 0.8:
        key = rng.choice(list(tree))
        roll = rng.random()
        if roll < 0.15:
            del tree[key]
        elif roll < 0.3:
            tree[rng.choice(WORDS + [key + "_"])] = random_json(rng)
        elif roll < 0.6:
            tree[key] = random_json(rng)
        else:
            tree[key] = mutate_tree(rng, tree[key])
        return tree
    if isinstance(tree, list) and tree and rng.random() < 0.8:
        at = rng.randrange(len(tree))
        if rng.random() < 0.5:
            tree[at] = mutate_tree(rng, tree[at])
        else:
            tree[at] = random_json(rng)
        return tree
    return random_json(rng)


def mutate_toml(rng: random.Random, text: str) -> str:
    lines = text.splitlines()
    for _ in range(rng.choice([1, 1, 2, 4])):
        if not lines:
            break
        at = rng.randrange(len(lines))
        line = lines[at]
        if "=" in line and rng.random() < 0.7:
            key = line.split("=", 1)[0]
            value = rng.choice(['"x"', "5", "-1", "32", "64", '"16x16"', '"48K"', "0", "1", "128", '"sm_90"', "0.9",
                                "1e999", "true", "[1, 2]", "{a = 1}", "9" * 5000, '""', "0.5",
                                "inf", "nan", '"sm_90"', '"12K"', "[]", '"\\ud800"', "1979-05-27", '["a", 1]',
                                json.dumps(rng.choice(WORDS))])
            lines[at] = f"{key}= {value}"
        elif rng.random() < 0.5:
            lines.insert(at, rng.choice(["[[kernels]]", "[[budgets]]", "[tool.tuneadvise]", "x = 1", "[arch]", "[",
                                         'name = "k"', "[[arch]]", "cc = 5"]))
        else:
            del lines[at]
    return "\n".join(lines) + "\n"


def ptxas_log(rng: random.Random) -> bytes:
    out = []
    for _ in range(rng.randint(1, 6)):
        name = rng.choice(["_Z6kernelPfi", "_Z5saxpyIfLi4EEvT_PKS0_PS0_i", "k", "_Z3fooIiEvT_", "_ZN2ns1kEv",
                           "_Z" + "".join(rng.choice("SITE_0123vifPKN") for _ in range(rng.randint(1, 30))),
                           rng.choice(WORDS) or "x"])
        arch = rng.choice(["sm_90", "sm_80", "sm_90a", "sm_120", "sm_52", "sm_1", "sm_" + str(rng.randint(0, 200))])
        number = lambda: rng.choice([0, 1, 32, 255, 256, 65536, 2**31, rng.randint(0, 10**6), 10**rng.randint(1, 40)])  # noqa: E731
        out.append(f"ptxas info    : Compiling entry function '{name}' for '{arch}'")
        if rng.random() < 0.7:
            out.append(f"ptxas info    : Function properties for {name}")
            out.append(f"    {number()} bytes stack frame, {number()} bytes spill stores, {number()} bytes spill loads")
        used = f"ptxas info    : Used {number()} registers"
        if rng.random() < 0.6:
            used += f", used {number()} barriers"
        if rng.random() < 0.5:
            used += f", {number()} bytes smem"
        out.append(used + f", {number()} bytes cmem[0]")
    return ("\n".join(out) + "\n").encode("utf-8", "surrogateescape")


def cuobjdump_listing(rng: random.Random) -> bytes:
    out = []
    for _ in range(rng.randint(1, 4)):
        out += ["", "Fatbin elf code:", "================", f"arch = {rng.choice(['sm_90', 'sm_80', 'sm_x', 'sm_120'])}",
                "code version = [1,7]", "", "Resource usage:"]
        for _ in range(rng.randint(1, 4)):
            out.append(f" Function {rng.choice(['_Z6kernelPfi', 'k', '_Z1fv'])}:")
            fields = [f"{key}:{rng.choice([0, 1, 32, 255, 99999, -1, 10**30])}"
                      for key in rng.sample(["REG", "STACK", "SHARED", "LOCAL", "CONSTANT[0]", "TEXTURE", "BAR"],
                                            rng.randint(0, 7))]
            out.append("  " + " ".join(fields))
    return ("\n".join(out) + "\n").encode()


def batch_lines(rng: random.Random) -> bytes:
    lines = []
    for _ in range(rng.randint(1, 8)):
        if rng.random() < 0.6:
            item = {"arch": rng.choice(VALID["arch"] + WORDS), "registers": rng.choice([32, 64, "32", -1, 300, None]),
                    "block_size": rng.choice([256, "16x16", 0, 2048, [32, 8], "x"])}
            for key in rng.sample(["shared_mem", "dynamic_shared_mem", "carveout", "cluster_size", "grid_size",
                                   "sm_count", "opt_in", "barriers", "extra"], rng.randint(0, 3)):
                item[key] = random_json(rng, 2)
            line = json.dumps(item)
        else:
            line = json.dumps(random_json(rng))
        if rng.random() < 0.1:
            line = line[: rng.randint(0, len(line))]
        lines.append(line)
    return ("\n".join(lines) + "\n").encode()


def cuda_source(rng: random.Random) -> bytes:
    pieces = ["__global__ void k(float *x) {", "}", "__shfl(a, 1);", "__shfl_down_sync(0xffffffff, v, 1);",
              "volatile float *p;", "__mul24(2, 3);", "/* ", " */", "// ", '"', "'", "R\"(", ")\"", "\n",
              "template<> __global__", "__launch_bounds__(256, 2)", "// tuneadvise: ignore TA801", "#define X \\",
              "__syncwarp();", "int a;", "(", ")", "{", "}"]
    return "".join(rng.choice(pieces) + rng.choice([" ", "\n", ""]) for _ in range(rng.randint(1, 120))).encode()


YAML_TAGS = ["!!timestamp", "!!bool", "!!int", "!!float", "!!binary", "!!str", "!!null", "!!seq", "!!map", "!!set",
             "!!omap", "!!pairs", "!", "!x", "!!python/object:os.system", "!<tag:yaml.org,2002:int>", "&a", "*a"]
YAML_SCALARS = ["maybe", "''", "2001-12-14t21:59:xx.10-05:00", "2001-13-45", "2001-02-30", "0x", "0b2", "0o9",
                "1_000", ".inf", ".nan", "~", "-", "sm_90", "'x'", "yes", "on", "12:30:45", "1e999", "0x_1",
                "\"\\q\"", "[", "{", "|", ">", "%TAG", "@", "`", "\t", "9" * 5000]


def yaml_config(rng: random.Random) -> tuple[bytes, str]:
    """A lint config in YAML: keys of the config, values plain, quoted, tagged, anchored or aliased."""
    keys = ["arch", "block_size", "ignore", "select", "fail_on", "min_occupancy", "inputs", "schema_version",
            "kernels", "budgets", rng.choice(WORDS) or "x"]
    lines = []
    for _ in range(rng.randint(1, 6)):
        key = rng.choice(keys)
        value = rng.choice(YAML_SCALARS + [json.dumps(random_json(rng)), rng.choice(VALID["arch"]), "256"])
        if rng.random() < 0.5:
            value = f"{rng.choice(YAML_TAGS)} {value}"
        if rng.random() < 0.3:
            value = f"[{value}]"
        if key in ("kernels", "budgets"):
            lines += [f"{key}:", f"  - name: {rng.choice(['k', '_Z*', value])}",
                      f"    {rng.choice(['block_size', 'registers', 'max_registers', 'arch', 'x'])}: {value}"]
        else:
            lines.append(f"{key}: {value}")
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"), rng.choice([".yaml", ".yml"])


def compile_commands(rng: random.Random) -> tuple[bytes, str]:
    """A compile_commands.json: entries whose file, directory, command or arguments hold what a
    file can (NUL bytes, names of thousands of characters, flags that write or skip the compile);
    now and then one that compiles the sandbox's tiny.cu for real."""
    entries = []
    for _ in range(rng.randint(1, 4)):
        name = rng.choice(["tiny.cu", "missing.cu", "a\0b.cu", "a" * rng.randint(200, 6000) + ".cu", "k.cpp",
                           "../tiny.cu", "", "x.CU", rng.choice(WORDS) + ".cu"])
        flags = rng.sample(["-DN=4", "-D\0=1", "-I\0", "-O3", "-std=c++17", "-arch=sm_90", "--keep", "-o", "x.o",
                            "-MD", "-MF", "-Xcompiler=-fPIC,-MD", "--dryrun", "-optf", "f", "-gencode",
                            "arch=compute_90,code=sm_90", "'", '"', "-Xptxas", rng.choice(WORDS)], rng.randint(0, 5))
        entry = {"directory": rng.choice([".", "", "missing", "a\0", "/", "x" * 3000]), "file": name}
        if rng.random() < 0.5:
            entry["arguments"] = ["nvcc", *flags, "-c", name]
        else:
            entry["command"] = " ".join(["nvcc", *flags, "-c", name])
        for _ in range(rng.randint(0, 1)):
            entry = mutate_tree(rng, entry) if rng.random() < 0.3 else entry
        entries.append(entry)
    if rng.random() < 0.02:  # a real compile, rare: nvcc takes seconds
        entries = [{"directory": ".", "file": "tiny.cu", "arguments": ["nvcc", "-arch=sm_90", "-c", "tiny.cu"]}]
    document = entries if rng.random() < 0.9 else random_json(rng)
    return json.dumps(document).encode(), ".json"


def hostile_body(rng: random.Random) -> tuple[bytes, str]:
    """A large input of a shape that was slow or large before (issue 20), 50 KB to 1 MB: the
    per-input time and memory limits apply to these most of all."""
    size = rng.randint(50_000, 1_000_000)
    kind = rng.randrange(10)
    if kind == 0:
        return (b"ptxas info    : Compiling entry function '_Z1kv' for 'sm_90'\n    " + b"9" * size
                + b" bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\nptxas info    : Used 32 registers\n"), ".log"
    if kind == 1:
        one = ptxas_log(rng)
        return one * max(1, size // max(1, len(one))), ".log"
    if kind == 2:
        return b"Fatbin elf code:\narch = sm_90\nResource usage:\n Function _Z1kv:\n  REG:1 SHARED:0 " + b"A" * size, ".txt"
    if kind == 3:
        depth = size // 2
        return b"[" * depth + b"]" * depth, rng.choice([".json", ".jsonl"])
    if kind == 4:
        return b"a = " + b"[" * (size // 2) + b"]" * (size // 2) + b"\n", ".toml"
    if kind == 5:
        return b"x:\n" + b"".join(b"  " * i + b"- \n" for i in range(min(size // 400, 2000))), ".yaml"
    if kind == 6:
        return rng.choice([b"volatile ", b"/* ", b"template<> __global__\n", b"__shfl(", b"R\"("]) * (size // 9), ".cu"
    if kind == 7:
        return b'{"arch": "sm_90", "registers": ' + b"9" * size + b', "block_size": 256}\n', ".jsonl"
    if kind == 8:
        name = "_Z1f1BI1AS0_E" + "".join(f"1BIS{i}_S{i}_E" for i in range(1, rng.randint(5, 30)))
        return (f"ptxas info    : Compiling entry function '{name}' for 'sm_90'\nptxas info    : Used 32 registers\n"
                .encode() * rng.randint(1, 50)), ".log"
    return rng.randbytes(size), rng.choice(SUFFIXES)


def file_body(rng: random.Random, seeds) -> tuple[bytes, str]:
    """(contents, suffix) of a generated input file."""
    if rng.random() < 0.01:
        return hostile_body(rng)
    seed = rng.choice(seeds)
    if seed == "yaml":
        return yaml_config(rng)
    if seed == "compile_commands":
        return compile_commands(rng)
    if seed == "batch":
        return batch_lines(rng), ".jsonl"
    if seed == "source":
        return cuda_source(rng), ".cu"
    roll = rng.random()
    if roll < 0.08:
        return ptxas_log(rng), ".log"
    if roll < 0.12:
        return cuobjdump_listing(rng), ".txt"
    if roll < 0.15:
        return batch_lines(rng), ".jsonl"
    if roll < 0.18:
        return cuda_source(rng), ".cu"
    if roll < 0.22:
        return rng.randbytes(rng.randint(0, 600)), rng.choice(SUFFIXES)
    data = seed.read_bytes()
    suffix = seed.suffix if rng.random() < 0.85 else rng.choice(SUFFIXES)
    if roll < 0.3:
        return data, suffix
    if seed.suffix in (".json", ".yaml") and roll < 0.6:
        try:
            tree = json.loads(data)
            for _ in range(rng.randint(1, 3)):
                tree = mutate_tree(rng, tree)
            return json.dumps(tree).encode(), suffix
        except ValueError:
            pass
    if seed.suffix == ".toml" and roll < 0.6:
        return mutate_toml(rng, data.decode("utf-8", "replace")).encode("utf-8", "surrogateescape"), suffix
    return mutate_bytes(rng, data), suffix


# -- argument vectors -------------------------------------------------------------------

class Sandbox:
    """The folder inputs are written to and the special output paths, checked after every input."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.counter = 0
        self.target = folder / "target.txt"
        self.target.write_text("kept\n")
        self.fifo = folder / "drain.fifo"
        os.mkfifo(self.fifo)
        # Drained by a process, not a thread: a threaded process makes the demangler start a fresh
        # interpreter instead of forking, which is not what a user's run does.
        self.drainer = subprocess.Popen(["sh", "-c", f"while :; do cat '{self.fifo}' > /dev/null; done"],
                                        stdin=subprocess.DEVNULL, start_new_session=True)
        self.link_to_file = folder / "link-to-file.json"
        self.link_to_file.symlink_to(self.target)
        self.link_to_null = folder / "link-to-null.json"
        self.link_to_null.symlink_to(os.devnull)
        self.dangling = folder / "dangling.json"
        self.dangling.symlink_to(folder / "nowhere" / "x.json")
        self.subdir = folder / "a-directory"
        self.subdir.mkdir()
        (folder / "tiny.cu").write_text("__global__ void k(float *x) { x[threadIdx.x] = 1.0f; }\n")
        # An anonymous pipe as `>(cat > /dev/null)` gives one: written as /dev/fd/N, drained by a process.
        read_end, self.pipe = os.pipe()
        self.pipe_drainer = subprocess.Popen(["cat"], stdin=read_end, stdout=subprocess.DEVNULL,
                                             start_new_session=True)
        os.close(read_end)
        self.special = [self.fifo, self.link_to_file, self.link_to_null, self.dangling, self.subdir, Path(os.devnull)]
        self.state = {path: self._state(path) for path in self.special}

    @staticmethod
    def _state(path: Path):
        info = os.lstat(path)
        return stat.S_IFMT(info.st_mode), os.readlink(path) if stat.S_ISLNK(info.st_mode) else None, \
            (info.st_rdev if stat.S_ISCHR(info.st_mode) else None)

    def replaced(self) -> list[str]:
        changed = []
        for path, before in self.state.items():
            try:
                now = self._state(path)
            except FileNotFoundError:
                now = None
            if now != before:
                changed.append(str(path))
        return changed

    def new_file(self, rng, seeds) -> str:
        data, suffix = file_body(rng, seeds)
        self.counter = (self.counter + 1) % 64
        path = self.folder / f"in{self.counter}{suffix}"
        path.write_bytes(data)
        return str(path)

    def input_path(self, rng, seeds) -> str:
        roll = rng.random()
        if roll < 0.9:
            return self.new_file(rng, seeds)
        return rng.choice([str(self.folder / "missing.log"), str(self.subdir), os.devnull, "-",
                           str(self.link_to_file), str(self.dangling)])

    def output_path(self, rng, readable: bool = False) -> str:
        """A path to write to; `readable`: one that is read too (--baseline), so never the FIFO,
        which a read would wait on for a writer as `cat` does."""
        paths = [str(self.folder / "out.json"), str(self.folder / "out.svg"), str(self.folder / "out.png"),
                 str(self.folder / "out"), "-", os.devnull, str(self.link_to_file), str(self.link_to_null),
                 str(self.dangling), str(self.subdir), str(self.folder / "no" / "such" / "dir.json"), str(self.target),
                 "/dev/fd/99", "/proc/out.json"]
        if not readable:  # the pipes: a read would wait for a writer
            paths += [str(self.fifo), "/dev/stdout", f"/dev/fd/{self.pipe}", "/dev/fd/0", "/dev/stderr"]
        return rng.choice(paths)


def value_for(rng, param, sandbox: Sandbox, valid: float = 0.5) -> str:
    """A value for `param`: one it takes when used well with probability `valid`."""
    import click

    if param.name in OUTPUT_OPTIONS:
        return sandbox.output_path(rng, readable=param.name == "baseline")
    kind = param.type
    if isinstance(kind, (click.Path, click.File)):
        return sandbox.input_path(rng, SEEDS_FOR.get(param.name, SEEDS))
    if isinstance(kind, click.Choice) and rng.random() < max(valid, 0.7):
        return rng.choice(list(kind.choices))
    if param.name in VALID and rng.random() < valid:
        return rng.choice(VALID[param.name])
    roll = rng.random()
    if roll < 0.6:
        return rng.choice(WORDS)
    if roll < 0.8:
        return str(rng.choice([rng.randint(-10, 10**4), 2**rng.randint(0, 70), rng.random() * 10**rng.randint(-9, 12)]))
    return "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0x80, 0x3000), 0x0A, 0x09]))
                   for _ in range(rng.randint(0, 20)))


def arguments(rng, command, sandbox: Sandbox, prefix=(), valid: float = 0.5, chosen: float = 0.3) -> list[str]:
    """Some of `command`'s options (each with probability `chosen`) and its positional arguments."""
    import click

    args = list(prefix)
    for param in command.params:
        if isinstance(param, click.Argument):
            count = rng.randint(1 if valid > 0.9 else 0, 3) if param.nargs == -1 else param.nargs
            args += [value_for(rng, param, sandbox, valid) for _ in range(count)]
        elif param.name != "help" and rng.random() < chosen:
            option = rng.choice(param.opts)
            args += [option] if param.is_flag else [option, value_for(rng, param, sandbox, valid)]
    if isinstance(command, click.Group) and rng.random() < 0.7:
        name = rng.choice(sorted(command.commands))
        return arguments(rng, command.commands[name], sandbox, (*args, name), valid, chosen)
    if rng.random() < 0.05:
        args.insert(rng.randint(0, len(args)), rng.choice(["--nope", "-Z", "extra", "--help", "--debug"]))
    return args


SURFACE_SHARE = 0.3  # of the CLI inputs, aimed at the surfaces below rather than any option of any command


def surface_input(rng, sandbox: Sandbox) -> list[str]:
    """An argument vector aimed at one of the newer surfaces: a YAML config, a compile_commands.json,
    --cuda/--bytes-in-flight/--virtual-resources, max-dynamic-smem, a batch, an output path that is a
    pipe or a descriptor."""
    log = sandbox.new_file(rng, [FIXTURES / "lint" / "ptxas_sm_90.log", FIXTURES / "lint" / "ptxas_multi.log"])
    kind = rng.choice(["yaml", "compile_commands", "launch", "max-dynamic-smem", "batch", "output"])
    if kind == "yaml":
        path = sandbox.new_file(rng, ["yaml"])
        return ["lint", log, "--config", path, *rng.choice([[], ["--format", "json"], ["-o", sandbox.output_path(rng)]])]
    if kind == "compile_commands":
        return ["lint", "--compile-commands", sandbox.new_file(rng, ["compile_commands"]),
                *rng.choice([[], ["--arch", "sm_90"], ["--arch", rng.choice(WORDS)]]), "--compile-timeout", "20"]
    extras = []
    for option, key in (("--cuda", "cuda"), ("--bytes-in-flight", "bytes_in_flight"),
                        ("--virtual-resources", "virtual_resources")):
        if rng.random() < 0.5:
            extras += [option, rng.choice(VALID[key]) if rng.random() < 0.6 else rng.choice(WORDS)]
    arch = rng.choice(VALID["arch"]) if rng.random() < 0.8 else rng.choice(WORDS)
    if kind == "launch":
        name = rng.choice(["occupancy", "suggest"])
        extras = [e for e in extras if name == "occupancy" or e != "--bytes-in-flight"]
        return [name, "--arch", arch, "-r", rng.choice(VALID["registers"]), *(["-b", "256"] if name == "occupancy"
                                                                                 else []), *extras]
    if kind == "max-dynamic-smem":
        return ["max-dynamic-smem", "--arch", arch, "-r", rng.choice(VALID["registers"] + WORDS[:8]),
                "-b", rng.choice(VALID["block_size"]), "-n", rng.choice(VALID["blocks_per_sm"] + WORDS[:8]),
                *[e for e in extras if e != "--bytes-in-flight"][:2], *rng.choice([[], ["--opt-in"]])]
    if kind == "batch":
        return ["occupancy", "--batch", sandbox.new_file(rng, ["batch"]), *extras[:2]]
    return ["lint", log, "-o", sandbox.output_path(rng), *rng.choice([[], ["--format", rng.choice(
        ["json", "sarif", "csv", "junit", "markdown", "github", "table"])]])]


def cli_input(rng, sandbox: Sandbox) -> tuple[list[str], bytes, dict]:
    from tuneadvise.cli.main import COMMANDS, cli

    env = {"NO_COLOR": "1", "TUNEADVISE_FORMAT": rng.choice([None] * 8 + ["json", "sarif", "x"])}
    if rng.random() < SURFACE_SHARE:
        return surface_input(rng, sandbox), b"", env
    name = rng.choice(sorted(COMMANDS))
    command = cli.get_command(None, name)
    base = BASE.get(name, []) if rng.random() < 0.8 else []
    # Most inputs are nearly valid, so they reach the readers, the engine and the writers; some are wild.
    valid, chosen = rng.choice([(0.97, 0.15), (0.9, 0.25), (0.6, 0.3), (0.3, 0.4)])
    args = [name, *base, *arguments(rng, command, sandbox, valid=valid, chosen=chosen)]
    stdin = b""
    if "-" in args or rng.random() < 0.1:
        stdin, _ = file_body(rng, SEEDS + ["batch"])
    return args, stdin, env


# -- library calls -------------------------------------------------------------------------

def library_input(rng, sandbox: Sandbox):
    """(description, a call with no arguments, the exception types it may raise)."""
    from tuneadvise.advisor.batch import run_batch
    from tuneadvise.advisor.inputs import InputError
    from tuneadvise.advisor.launch import LaunchConfig
    from tuneadvise.advisor.lint.config import ConfigError, load_config
    from tuneadvise.advisor.readers.compiler_output import parse_cuobjdump, parse_ptxas
    from tuneadvise.advisor.readers.cubin import CubinError, read_cubin
    from tuneadvise.advisor.readers.demangle import demangle_many
    from tuneadvise.advisor.readers.usage import read_usage
    from tuneadvise.advisor.rules.source_scan import scan_source
    from tuneadvise.specs.models import SpecFileError, load_user_spec

    kind = rng.choice(["read_usage", "ptxas", "cuobjdump", "cubin", "launch", "config", "spec", "batch", "source",
                       "demangle", "resolve", "compile_commands"])
    if kind == "resolve":
        return resolve_input(rng)
    if kind == "compile_commands":
        return compile_commands_input(rng, sandbox)
    if kind == "read_usage":
        path = sandbox.new_file(rng, SEEDS)
        return f"read_usage({path})", lambda: read_usage(path), ()
    if kind == "ptxas":
        lines = (ptxas_log(rng) if rng.random() < 0.5 else mutate_bytes(rng, ptxas_log(rng))).decode("utf-8", "replace")
        return "parse_ptxas", lambda: list(parse_ptxas(lines.splitlines(), [])), ()
    if kind == "cuobjdump":
        lines = mutate_bytes(rng, cuobjdump_listing(rng)).decode("utf-8", "replace")
        return "parse_cuobjdump", lambda: list(parse_cuobjdump(lines.splitlines(), problems=[])), ()
    if kind == "cubin":
        cubins = [p for p in SEEDS if p.suffix == ".cubin"]
        data = mutate_bytes(rng, rng.choice(cubins).read_bytes())
        return "read_cubin", lambda: read_cubin(data), (CubinError,)
    if kind == "launch":
        good = {"registers": 32, "block_size": "16x16", "shared_mem": "12K", "dynamic_shared_mem": 4096,
                "carveout": "max-l1", "opt_in": True, "barriers": 2, "grid_size": 1000, "sm_count": 132,
                "cluster_size": 2, "spill_stores": 8, "stack_frame": 16, "max_threads_per_block": 1024, "x": 1}
        values = {key: good[key] if rng.random() < 0.7 else random_json(rng, 2) for key in rng.sample(
            ["registers", "block_size", "shared_mem", "dynamic_shared_mem", "carveout", "opt_in", "barriers",
             "grid_size", "sm_count", "cluster_size", "spill_stores", "stack_frame", "max_threads_per_block", "x"],
            rng.randint(0, 6))}
        return f"LaunchConfig.from_mapping({values!r:.200})", lambda: LaunchConfig.from_mapping(values), (InputError,)
    if kind == "config":
        path = sandbox.new_file(rng, SEEDS_FOR["config_file"] + SEEDS)
        return f"load_config({path})", lambda: load_config(path), (ConfigError,)
    if kind == "spec":
        path = sandbox.new_file(rng, SEEDS_FOR["spec_file"])
        return f"load_user_spec({path})", lambda: load_user_spec(path), (SpecFileError,)
    if kind == "batch":
        data = batch_lines(rng) if rng.random() < 0.5 else mutate_bytes(rng, batch_lines(rng))
        import io

        return "run_batch", lambda: run_batch(data.splitlines(keepends=True), io.StringIO()), ()
    if kind == "source":
        text = cuda_source(rng).decode()
        from tuneadvise.specs.catalog import shipped_catalog

        targets = [shipped_catalog().resolve(name).arch for name in rng.sample(["sm_20", "sm_60", "sm_70", "sm_90"], 2)]
        return "scan_source", lambda: scan_source(text, "k.cu", targets), ()
    names = ["_Z" + "".join(rng.choice("SITE_0123456789vifPKNZJRLD") for _ in range(rng.randint(0, 60)))
             for _ in range(rng.randint(1, 20))]
    return "demangle_many", lambda: demangle_many(names), ()


def bounded_message(exc: Exception) -> Exception:
    """`exc`, or a ValueError saying that its message is over MAX_ERROR_LINE characters."""
    if len(str(exc)) > MAX_ERROR_LINE:
        return ValueError(f"a message of {len(str(exc)):,} characters: {str(exc)[:100]}")
    return exc


def resolve_input(rng):
    """Catalog.resolve of any text: an architecture, or UnknownArchError with a short message."""
    from tuneadvise.specs.catalog import Catalog
    from tuneadvise.specs.names import UnknownArchError

    text = rng.choice([rng.choice(WORDS), "x" * rng.randint(100, 200_000), "sm_" + "9" * rng.randint(10, 6000),
                       "".join(chr(rng.randrange(1, 0x10FFFF)) for _ in range(rng.randint(0, 600)))])

    def call():
        try:
            Catalog().resolve(text)
        except UnknownArchError as exc:
            raise bounded_message(exc) from None

    return f"Catalog.resolve({text!r:.80})", call, (UnknownArchError,)


def compile_commands_input(rng, sandbox):
    """load_builds of a generated compile_commands.json: builds and problems, each problem short."""
    from tuneadvise.advisor.toolchain.compile_commands import CompileCommandsError, load_builds

    path = sandbox.new_file(rng, ["compile_commands"])
    archs = rng.choice([(), ("sm_90",), ("sm_90", "sm_80")])

    def call():
        try:
            _, problems = load_builds(path, archs)
        except CompileCommandsError as exc:
            raise bounded_message(exc) from None
        for problem in problems:
            if len(problem) > MAX_ERROR_LINE:
                raise ValueError(f"a problem of {len(problem):,} characters: {problem[:100]}")

    return f"load_builds({path})", call, (CompileCommandsError,)


# -- running ------------------------------------------------------------------------------------

class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def cpu_seconds() -> float:
    """User and system time of this process and its waited-for children: beside the wall time of
    a slow input, it tells a slow input from a loaded machine."""
    return sum(getattr(resource.getrusage(who), field) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for field in ("ru_utime", "ru_stime"))


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_in_process(args, stdin, env) -> tuple[int | str, str, float]:
    from click.testing import CliRunner

    from tuneadvise.cli.main import cli

    runner = CliRunner()
    start = time.perf_counter()
    signal.alarm(ALARM_S)
    try:
        result = runner.invoke(cli, args, input=stdin, env=env)
        code, output = result.exit_code, result.output
    except Hang:
        code, output = "hang", ""
    finally:
        signal.alarm(0)
    return code, output, time.perf_counter() - start


def run_subprocess(args, stdin, env, stdout_kind: str) -> tuple[int | str, str, float, float]:
    child_env = {**os.environ, **{k: v for k, v in env.items() if v is not None}}
    child_env.pop("TUNEADVISE_FORMAT", None) if env.get("TUNEADVISE_FORMAT") is None else None
    with tempfile.TemporaryFile() as feed, tempfile.TemporaryFile() as errors:
        feed.write(stdin)
        feed.seek(0)
        if stdout_kind == "full":
            stdout = open("/dev/full", "wb") if os.path.exists("/dev/full") else subprocess.DEVNULL
        else:
            stdout = subprocess.DEVNULL
        start = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-m", "tuneadvise.cli", *args], stdin=feed, stdout=stdout,
                                   stderr=errors, env=child_env,
                                   preexec_fn=(lambda: os.close(1)) if stdout_kind == "closed" else None)
        deadline = start + ALARM_S
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                process.kill()
                pid, status, usage = os.wait4(process.pid, 0)
                return "hang", "", ALARM_S, usage.ru_maxrss / 1024
            time.sleep(0.002)
        seconds = time.perf_counter() - start
        if stdout not in (subprocess.DEVNULL,):
            stdout.close()
        process.returncode = os.waitstatus_to_exitcode(status)
        errors.seek(0)
        text = errors.read().decode("utf-8", "replace")
    return process.returncode, text, seconds, usage.ru_maxrss / 1024


def long_error_line(output: str) -> int:
    """The length of the longest error line over MAX_ERROR_LINE characters in `output`, or 0: a
    `tuneadvise:` line (errors, bad input, warnings), or a batch line's error message."""
    longest = 0
    for line in output.splitlines():
        if line.startswith("tuneadvise:"):
            longest = max(longest, len(line))
        elif line.startswith('{"schema_version"') and '"error"' in line[:60]:
            try:
                longest = max(longest, len(json.loads(line)["error"]["message"]))
            except (ValueError, KeyError, TypeError):
                longest = max(longest, len(line))
    return longest if longest > MAX_ERROR_LINE else 0


def surface_of(args) -> bool:
    return any(a in ("--compile-commands", "--cuda", "--virtual-resources", "--bytes-in-flight") or
               a.endswith((".yaml", ".yml")) or a.startswith("/dev/fd/") or a == "/dev/stdout" for a in args)


def input_bytes(args, stdin) -> int:
    total = len(stdin)
    for arg in args:
        try:
            if os.path.isfile(arg):
                total += os.path.getsize(arg)
        except (OSError, ValueError):
            pass
    return total


def worker(index: int, count: int, seed: int, every: int, queue) -> None:
    rng = random.Random(f"{seed}-{index}")
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, resource.RLIM_INFINITY))  # a blow-up fails here, not the machine
    signal.signal(signal.SIGALRM, _alarm)
    folder = Path(tempfile.mkdtemp(prefix=f"tuneadvise-fuzz-{index}-"))
    os.chdir(folder)
    sandbox = Sandbox(folder)
    stats = collections.Counter()
    codes = collections.Counter()
    targets = collections.Counter()
    failures = []
    slowest = (0.0, None)
    child_peak = 0.0
    baseline_peak = last_peak = peak_mb()
    for number in range(count):
        if number % 200 == 0:  # a project config in the working directory now and then
            for name in ("tuneadvise.toml", "pyproject.toml"):
                (folder / name).unlink(missing_ok=True)
            if rng.random() < 0.3:
                name = rng.choice(["tuneadvise.toml", "pyproject.toml"])
                data, _ = file_body(rng, SEEDS_FOR["config_file"])
                (folder / name).write_bytes((b"[tool.tuneadvise]\n" if name == "pyproject.toml" else b"") + data)
        problem = None
        cpu_before = cpu_seconds()
        if rng.random() < LIBRARY_SHARE:
            what, call, allowed = library_input(rng, sandbox)
            targets["library: " + what.split("(")[0]] += 1
            start = time.perf_counter()
            signal.alarm(ALARM_S)
            try:
                call()
                outcome = "ok"
            except Hang:
                outcome, problem = "hang", "hang"
            except allowed as exc:
                outcome = type(exc).__name__
            except Exception as exc:  # noqa: BLE001 - anything else is what the campaign looks for
                outcome, problem = type(exc).__name__, f"raised {type(exc).__name__}: {str(exc)[:200]}"
            finally:
                signal.alarm(0)
            seconds = time.perf_counter() - start
            codes[f"library {outcome}"] += 1
            record = {"library": what}
            size = 0
        else:
            args, stdin, env = cli_input(rng, sandbox)
            size = input_bytes(args, stdin)
            targets[args[0] + (" (surface)" if surface_of(args) else "")] += 1
            record = {"args": args, "env": env}
            if every and number % every == every - 1:
                stdout_kind = rng.choice(["devnull"] * 6 + ["full", "closed"])
                code, output, seconds, child = run_subprocess(args, stdin, env, stdout_kind)
                child_peak = max(child_peak, child)
                stats["subprocess"] += 1
                record["subprocess"] = stdout_kind
                if child > MEMORY_LIMIT_MB:
                    problem = f"child peak {child:.0f} MB"
            else:
                code, output, seconds = run_in_process(args, stdin, env)
                stats["in-process"] += 1
            codes[code] += 1
            if code == "hang":
                problem = "hang"
            elif code not in DOCUMENTED or code == 70:
                problem = f"exit {code}"
            elif "Traceback" in output or "internal error" in output:
                problem = "traceback"
            elif long_error_line(output):
                problem = f"long-line: an error line of {long_error_line(output):,} characters"
            if size < (1 << 20) and seconds > slowest[0]:
                slowest = (seconds, " ".join(a[:40] for a in args)[:200])
            if stdin and len(stdin) < 65536:
                record["stdin_b64"] = base64.b64encode(stdin).decode()
            if problem:
                record["output"] = output[-1500:]
        if problem is None and size < (1 << 20) and seconds > TIME_LIMIT_S:
            problem = f"slow: {seconds:.1f} s"
        if problem is None and peak_mb() > MEMORY_LIMIT_MB >= last_peak:  # this input took the worker over
            problem = f"peak {peak_mb():.0f} MB"
        last_peak = peak_mb()
        replaced = sandbox.replaced()
        if replaced:
            problem = (problem + "; " if problem else "") + f"replaced {', '.join(replaced)}"
            sandbox.state = {path: sandbox._state(path) for path in sandbox.special}  # report each once
        if problem:
            stats["failures"] += 1
            kind = problem.split(":")[0].split(" ")[0]
            stats[f"failure: {kind}"] += 1
            record.update(problem=problem, seconds=round(seconds, 3), cpu_seconds=round(cpu_seconds() - cpu_before, 3))
            for arg in record.get("args", []):
                if os.path.isfile(arg) and os.path.getsize(arg) < 65536 and arg.startswith(str(folder)):
                    record.setdefault("files_b64", {})[arg] = base64.b64encode(Path(arg).read_bytes()).decode()
            failures.append(record)
        stats["inputs"] += 1
        if number % 1000 == 999:
            queue.put(("progress", index, number + 1))
    os.killpg(sandbox.drainer.pid, signal.SIGKILL)  # the shell and its cat
    os.close(sandbox.pipe)
    sandbox.pipe_drainer.wait()
    queue.put(("done", index, {"stats": stats, "codes": {str(k): v for k, v in codes.items()}, "targets": targets,
                               "failures": failures, "slowest": slowest, "peak_mb": peak_mb(),
                               "baseline_peak_mb": baseline_peak, "child_peak_mb": child_peak}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000, help="inputs in all (default 100,000)")
    parser.add_argument("--workers", type=int, default=2, help="processes sharing them (default 2)")
    parser.add_argument("--subprocess-every", type=int, default=500,
                        help="one input in this many runs in its own process (default 500; 0: none)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--failures", default="fuzz-failures.jsonl", help="where each failing input is written")
    options = parser.parse_args()
    started = time.perf_counter()
    queue = multiprocessing.get_context("fork").Queue()
    shares = [options.count // options.workers + (1 if i < options.count % options.workers else 0)
              for i in range(options.workers)]
    processes = [multiprocessing.get_context("fork").Process(
        target=worker, args=(i, shares[i], options.seed, options.subprocess_every, queue), daemon=True)
        for i in range(options.workers)]
    for process in processes:
        process.start()
    results, done = [], 0
    progress = [0] * options.workers
    while done < options.workers:
        kind, index, payload = queue.get()
        if kind == "progress":
            progress[index] = payload
            elapsed = time.perf_counter() - started
            print(f"  {sum(progress):,} inputs, {elapsed:.0f} s", file=sys.stderr, flush=True)
        else:
            results.append(payload)
            done += 1
    for process in processes:
        process.join()
    elapsed = time.perf_counter() - started
    stats, codes, targets = collections.Counter(), collections.Counter(), collections.Counter()
    failures = []
    for result in results:
        stats.update(result["stats"])
        codes.update(result["codes"])
        targets.update(result["targets"])
        failures += result["failures"]
    with open(options.failures, "w") as out:
        for failure in failures:
            out.write(json.dumps(failure) + "\n")
    slowest = max((r["slowest"] for r in results), key=lambda s: s[0])
    print(f"inputs: {stats['inputs']:,} in {elapsed:.0f} s ({stats['inputs'] / elapsed:.0f}/s, {options.workers} "
          f"workers); CLI in-process {stats['in-process']:,}, CLI subprocess {stats['subprocess']:,}, library "
          f"{stats['inputs'] - stats['in-process'] - stats['subprocess']:,}")
    print("per target: " + ", ".join(f"{name} {count:,}" for name, count in sorted(targets.items())))
    print("outcomes: " + ", ".join(f"{code} {count:,}" for code, count in sorted(codes.items(), key=str)))
    print(f"failures: {stats['failures']:,}" + "".join(f"; {key.split(': ')[1]} {value:,}"
                                                       for key, value in sorted(stats.items())
                                                       if key.startswith("failure: ")))
    print(f"slowest input under 1 MB: {slowest[0]:.2f} s ({slowest[1]})")
    print(f"peak RSS: workers {max(r['peak_mb'] for r in results):.0f} MB (at start "
          f"{max(r['baseline_peak_mb'] for r in results):.0f} MB), subprocesses "
          f"{max(r['child_peak_mb'] for r in results):.0f} MB")
    print(f"failing inputs written to {options.failures}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
