"""JSON Schema of `tuneadvise lint --format json` (schema_version 4), printed
by `tuneadvise schema lint` and checked against real output by the tests.

Version 4: each kernel's `launch` gains `from` (where the block checked comes
from: "host code", "config", "launch bounds" or "assumed") and `site` (the
launch in the source's host code it was read from, or null).

Version 3: each kernel gains `spills_from` (whose the spill figures are: "ptxas",
"sass", "config", or null) and `sass`, what its machine code proves where
nvdisasm read it (null elsewhere).

Version 2: a kernel's and each source's `spill_bytes` (stores plus loads) is
replaced by `spill_stores` and `spill_loads`, beside `stack_frame`; the
summary adds `failing_kernels`, `config` (the config file used) and `warnings`
(config entries that matched nothing). Added within version 2: a profiled
launch's `measured` object and the source tool `ncu`."""

from ..advice.verdict import OUTCOMES, SAYS
from ..engine.limits import LIMITERS
from ..measured_figures import SECTIONS
from ..rules import SEVERITIES
from .document import SCHEMA_VERSION
from .host_launches import LAUNCH_ORIGINS

_NULLABLE_INT = {"type": ["integer", "null"]}
_VERDICT = {
    "type": "object",
    "description": "whether the change the finding proposes is likely to pay, and the evidence (docs/advice.md)",
    "required": ["outcome", "evidence"],
    "properties": {
        "outcome": {"enum": list(OUTCOMES)},
        "evidence": {"type": "array", "items": {
            "type": "object", "required": ["kind", "value", "says", "why"],
            "properties": {"kind": {"type": "string"}, "says": {"enum": list(SAYS)},
                           "why": {"type": "string"}}}},
    },
}
_FINDING = {
    "type": "object",
    "required": ["code", "severity", "message", "arch", "details", "source"],
    "properties": {
        "code": {"type": "string", "pattern": "^TA[0-9]{3}$"},
        "severity": {"enum": list(SEVERITIES)},
        "message": {"type": "string"},
        "arch": {"type": "string"},
        "details": {"type": "object", "properties": {"verdict": _VERDICT}},
        "source": {"type": "string"},
        "baseline": {"enum": ["new", "worse", "baselined"]},
    },
}
_SOURCE = {
    "type": "object",
    "required": ["tool", "file", "line", "registers", "shared_mem", "stack_frame", "spill_stores", "spill_loads",
                 "barriers"],
    "properties": {
        "tool": {"enum": ["ptxas", "cuobjdump", "cubin", "fatbin", "config", "ncu"]},
        "file": {"type": "string"}, "line": _NULLABLE_INT,
        "registers": {"type": "integer"}, "shared_mem": {"type": "integer"},
        "stack_frame": _NULLABLE_INT, "spill_stores": _NULLABLE_INT, "spill_loads": _NULLABLE_INT,
        "barriers": _NULLABLE_INT,
    },
}
_PLACE = {"type": "object", "required": ["file", "line"],
          "properties": {"file": {"type": ["string", "null"]}, "line": _NULLABLE_INT}}
_SITE = {
    "type": "object",
    "required": ["file", "line", "offset", "kind", "bytes", "loop"],
    "properties": {
        "file": {"type": ["string", "null"]}, "line": _NULLABLE_INT,
        "offset": {"type": "integer", "minimum": 0, "description": "the instruction's offset in the kernel's code"},
        "kind": {"enum": ["store", "load"]},
        "bytes": {"type": "integer", "minimum": 1, "description": "the access width per thread"},
        "loop": {"oneOf": [{"type": "null"}, {
            "type": "object", "required": ["file", "line", "start", "end"],
            "description": "the innermost loop holding the instruction: a backward branch from `end` to `start`"}]},
    },
}
_COUNTS = {"type": "object", "additionalProperties": {"type": "object",
                                                      "additionalProperties": {"type": "integer", "minimum": 0}}}
_SASS = {
    "type": ["object", "null"],
    "description": "what the kernel's machine code proves (nvdisasm), null where it was not read",
    "required": ["peak_live_registers", "peak_lines", "spill_sites", "local_accesses", "local_stores",
                 "local_loads", "instructions"],
    "properties": {
        "peak_live_registers": {**_NULLABLE_INT, "description": "most general registers live at one instruction"},
        "peak_lines": {"type": "array", "items": _PLACE},
        "spill_sites": {"type": "array", "items": _SITE},
        "local_accesses": {"type": "array", "items": _SITE, "description": "local memory that is not spilling"},
        "local_stores": {"type": "integer", "minimum": 0}, "local_loads": {"type": "integer", "minimum": 0},
        "instructions": {
            "type": "object",
            "required": ["fp32", "fp16", "fp64", "tensor", "integer", "barriers", "shuffles", "atomics",
                         "async_copies", "loads", "stores"],
            "properties": {"loads": _COUNTS, "stores": _COUNTS},
            "additionalProperties": {"type": ["integer", "object"]},
        },
        "hot_loop": {"type": ["object", "null"],
                     "description": "the innermost loop with the most floating-point instructions: offsets `start`, "
                                    "`end`, and its `math`, `loads` (global and shared) and `instructions` counts"},
    },
}
_OCCUPANCY = {
    "type": "object",
    "required": ["schema_version", "arch", "compute_capability", "active_blocks_per_sm", "active_warps_per_sm",
                 "max_warps_per_sm", "occupancy", "limiters", "launchable", "errors"],
    "properties": {
        "occupancy": {"type": "number", "minimum": 0, "maximum": 1},
        "limiters": {"type": "array", "items": {"enum": list(LIMITERS)}},
        "launchable": {"type": "boolean"},
    },
}
_NULLABLE_NUMBER = {"type": ["number", "null"]}


def _section(description: str, fields: dict) -> dict:
    """A section's figures of a profiled launch: null when the export lacks the section."""
    return {"type": ["object", "null"], "description": description, "required": list(fields),
            "additionalProperties": False, "properties": fields}


_PERCENT = {"type": ["number", "null"], "description": "% of peak, 0..100, as the report gives it"}
_FIGURE = _NULLABLE_NUMBER
_MEASURED_SECTIONS = {
    "throughput": _section("GPU Speed Of Light Throughput (--section SpeedOfLight)", {
        "compute_pct": _PERCENT, "memory_pct": _PERCENT, "dram_pct": _PERCENT, "l1tex_pct": _PERCENT,
        "l2_pct": _PERCENT, "sm_active_cycles": _FIGURE, "elapsed_cycles": _FIGURE}),
    "warp_state": _section("Warp State Statistics (--section WarpStateStats)", {
        "cycles_per_issued_instruction": _FIGURE, "cycles_per_executed_instruction": _FIGURE,
        "active_threads_per_warp": _FIGURE, "not_predicated_off_threads_per_warp": _FIGURE,
        "stalls": {"type": "object", "additionalProperties": {"type": "number"},
                   "description": "stall reason -> warp cycles per issued instruction in it, largest first; "
                                  "empty when the export lacks the breakdown"}}),
    "scheduler": _section("Scheduler Statistics (--section SchedulerStats), per scheduler per cycle", {
        "active_warps": _FIGURE, "eligible_warps": _FIGURE, "issued_warps": _FIGURE,
        "one_or_more_eligible_pct": _PERCENT, "no_eligible_pct": _PERCENT}),
    "memory": _section("Memory Workload Analysis (--section MemoryWorkloadAnalysis)", {
        "dram_bytes_per_second": _FIGURE, "l1tex_hit_rate_pct": _PERCENT, "l2_hit_rate_pct": _PERCENT,
        "mem_busy_pct": _PERCENT, "max_bandwidth_pct": _PERCENT, "mem_pipes_busy_pct": _PERCENT}),
    "missing_sections": {"type": "array", "items": {"enum": [section for section, _ in SECTIONS.values()]},
                         "description": "the sections the export lacks for this launch"},
}
_MEASURED = {
    "type": "object",
    "description": "a profiled launch (Nsight Compute export): the report's figures; `occupancy` is the engine's",
    "required": ["achieved_occupancy", "theoretical_occupancy", "waves_per_sm", "block_limits",
                 "shared_mem_config_size", "duration_ns", "process", "launch_index", "grid_dims",
                 *_MEASURED_SECTIONS],
    "properties": {
        "achieved_occupancy": {**_NULLABLE_NUMBER, "description": "0..1, as the report gives it"},
        "theoretical_occupancy": {**_NULLABLE_NUMBER, "description": "0..1, as the report gives it"},
        "waves_per_sm": _NULLABLE_NUMBER,
        "block_limits": {"type": "object", "additionalProperties": {"type": "integer"}},
        "shared_mem_config_size": {"type": "integer", "description": "bytes: the configuration the driver chose"},
        "duration_ns": _NULLABLE_NUMBER,
        "process": {"type": "string"},
        "launch_index": {"type": "integer", "description": "ncu's ID of the launch"},
        "grid_dims": {"type": "array", "items": {"type": "integer"}},
        **_MEASURED_SECTIONS,
    },
}
_SITE = {
    "type": ["object", "null"],
    "description": "the launch in host code the block was read from (from: host code), or, for a kernel whose every "
                   "launch sets its block at run time, the first such launch",
    "required": ["file", "line", "column", "api", "run_time", "block_from", "attributes"],
    "additionalProperties": False,
    "properties": {
        "file": {"type": "string"}, "line": {"type": "integer", "minimum": 1}, "column": {"type": "integer", "minimum": 1},
        "api": {"enum": ["<<<>>>", "cudaLaunchKernel", "cudaLaunchCooperativeKernel", "cudaLaunchKernelEx",
                         "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchCooperativeKernel"]},
        "run_time": {"type": "array", "items": {"type": "string"},
                     "description": "the launch's values set at run time: block size, grid, dynamic shared memory, "
                                    "cluster dimensions, launch attributes"},
        "block_from": {"enum": ["cudaOccupancyMaxPotentialBlockSize", None],
                       "description": "the call that chose the block: checked at the block the engine's mirror of it "
                                      "gives (what `suggest` answers)"},
        "attributes": {"type": "array", "items": {"type": "string"},
                       "description": "cudaLaunchKernelEx's launch attributes, as named in the source"},
    },
}
_KERNEL = {
    "type": "object",
    "required": ["name", "demangled", "arch", "registers", "shared_mem", "spill_stores", "spill_loads",
                 "stack_frame", "barriers", "figures_from", "spills_from", "sources", "launch", "location", "occupancy",
                 "findings", "sass"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string"},
        "demangled": {"type": "string"},
        "arch": {"type": "string", "pattern": "^sm_[0-9]+[a-z]?$"},
        "registers": {"type": "integer", "minimum": 0},
        "shared_mem": {"type": "integer", "minimum": 0, "description": "static, excluding the reserved per-block shared memory"},
        "spill_stores": {**_NULLABLE_INT, "description": "bytes per thread, ptxas 'N bytes spill stores'"},
        "spill_loads": {**_NULLABLE_INT, "description": "bytes per thread, ptxas 'N bytes spill loads'"},
        "stack_frame": {**_NULLABLE_INT, "description": "bytes per thread, ptxas 'N bytes stack frame'"},
        "barriers": _NULLABLE_INT,
        "max_threads_per_block": _NULLABLE_INT,
        "figures_from": {"type": "string"},
        "spills_from": {"enum": ["ptxas", "sass", "config", None],
                        "description": "whose spill_stores/spill_loads are: ptxas's report, the spill-annotated "
                                       "instructions of the machine code, the config; null: unknown"},
        "sass": _SASS,
        "variant": {"type": ["string", "null"], "description": "a kernel cache entry's configuration (Triton: num_warps, "
                    "num_stages...; the file where one name occurs in several): variants of one kernel are never merged"},
        "sources": {"type": "array", "items": _SOURCE, "minItems": 1},
        "launch": {"type": "object", "required": ["block_dims", "dynamic_shared_mem", "carveout", "opt_in",
                                                   "grid_size", "cluster_size", "max_threads_per_block",
                                                   "configured_by", "from", "site"],
                   "properties": {"from": {"enum": list(LAUNCH_ORIGINS),
                                           "description": "where the block checked comes from: the launch in the "
                                                          "source's host code (or a kernel cache's framework), a "
                                                          "[[kernels]] entry or --block-size, the kernel's "
                                                          "__launch_bounds__, or the default"},
                                  "site": _SITE}},
        "location": {"type": "object", "required": ["file", "line"]},
        "occupancy": _OCCUPANCY,
        "findings": {"type": "array", "items": _FINDING},
        "measured": _MEASURED,
    },
}
LINT_OUTPUT_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": f"https://tuneadvise.dev/schema/lint-output-{SCHEMA_VERSION}.json",
    "title": "tuneadvise lint --format json",
    "type": "object",
    "required": ["schema_version", "tool", "kernels", "source_findings", "problems", "summary"],
    "properties": {
        "schema_version": {"const": SCHEMA_VERSION},
        "tool": {"type": "object", "required": ["name", "version"]},
        "kernels": {"type": "array", "items": _KERNEL},
        "source_findings": {"type": "array", "items": _FINDING},
        "problems": {"type": "array", "items": {"type": "object", "required": ["file", "line", "message"]}},
        "summary": {
            "type": "object",
            "required": ["kernels", "findings", "by_severity", "by_code", "fail_on", "failing_findings",
                         "failing_kernels", "passed", "problems", "skipped", "ptx_only_archs", "config", "warnings"],
            "properties": {"passed": {"type": "boolean"}, "failing_findings": {"type": "integer"},
                           "failing_kernels": {"type": "integer"}, "config": {"type": ["string", "null"]},
                           "warnings": {"type": "array", "items": {"type": "string"}}},
        },
    },
}
