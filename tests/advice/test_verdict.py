"""The verdict combiner and each evidence gate, on figures written out by hand: every gate's
threshold is crossed from both sides, so a gate that stops firing, or fires everywhere, fails."""

from __future__ import annotations

import pytest

from tuneadvise.advisor.advice import evidence_compiler, evidence_launch, evidence_machine_code, evidence_profile
from tuneadvise.advisor.advice.evidence_library import LibraryDataError, library, library_of, parse_library
from tuneadvise.advisor.advice.verdict import Evidence, combine, verdict_of
from tuneadvise.advisor.rules import Finding, with_evidence

NEUTRAL = Evidence("occupancy", {}, "neutral", "50% -> 62.5% occupancy")
GAIN = Evidence("profile", {}, "gain", "latency-bound")
LOSS = Evidence("compiler_at_cap", {}, "loss", "spills")
NO_GAIN = Evidence("machine_code", {}, "no_gain", "tensor cores")


@pytest.mark.parametrize("evidence, outcome", [
    ([], "unknown"), ([NEUTRAL], "unknown"), ([NEUTRAL, GAIN], "likely_gain"), ([GAIN, NO_GAIN], "unknown"),
    ([GAIN, LOSS], "likely_loss"), ([NO_GAIN, LOSS], "likely_loss"), ([NO_GAIN], "unknown"), ([LOSS], "likely_loss"),
])
def test_a_loss_outweighs_everything_and_a_gain_needs_no_doubt_against_it(evidence, outcome):
    assert combine(evidence).outcome == outcome


def test_the_text_names_what_decided_and_the_json_keeps_every_piece():
    verdict = combine([NEUTRAL, GAIN, LOSS])
    assert verdict.text() == "verdict: likely loss (spills)"
    assert verdict.to_dict() == {"outcome": "likely_loss", "evidence": [e.to_dict() for e in (NEUTRAL, GAIN, LOSS)]}
    assert combine([NEUTRAL]).text() == "verdict: unknown (no build, machine code or profile decides it: time it)"


def test_new_evidence_rewrites_the_verdict_clause_where_it_stands():
    verdict = combine([NEUTRAL])
    finding = Finding("TA301", "info", f"registers: 44 -> 40; {verdict.text()}; 3 live at x.cu:4", "sm_90",
                      {"verdict": verdict.to_dict()})
    changed = with_evidence(finding, [LOSS], "; built: 40 registers")
    assert changed.message == "registers: 44 -> 40; 3 live at x.cu:4; built: 40 registers; verdict: likely loss (spills)"
    assert verdict_of(changed.details).outcome == "likely_loss"
    plain = Finding("TA302", "warning", "low", "sm_90", {})
    assert with_evidence(plain, [LOSS]) == plain  # no verdict, nothing to weigh


@pytest.mark.parametrize("after, says", [(0, "neutral"), (8, "neutral"), (12, "loss"), (448, "loss")])
def test_the_compiler_gate_calls_a_cap_that_spills_more_than_a_small_spill_a_loss(after, says):
    before = {"registers": 64, "spill_stores": 0, "spill_loads": 0}
    evidence = evidence_compiler.at_cap(before, {"registers": 48, "spill_stores": after, "spill_loads": after})
    assert evidence.says == says
    assert evidence.value["spill_stores"] == [0, after]


def test_a_kernel_that_spills_today_is_judged_on_what_the_cap_adds():
    before = {"registers": 64, "spill_stores": 100}
    assert evidence_compiler.at_cap(before, {"registers": 56, "spill_stores": 104}).says == "neutral"
    assert evidence_compiler.at_cap(before, {"registers": 56, "spill_stores": 140}).says == "loss"


def test_tensor_cores_or_a_register_tiled_loop_rule_out_a_gain_from_a_cap():
    gate = evidence_machine_code.machine_code
    assert gate({"tensor": 12, "fp32": 3}).says == "no_gain"
    tiled = gate({"tensor": 0}, {"math": 64, "loads": 16, "instructions": 99})  # sgemm's 8x8 tile
    assert tiled.says == "no_gain" and tiled.value["math_per_load"] == 4.0
    assert gate({"tensor": 0}, {"math": 32, "loads": 16, "instructions": 71}).says == "neutral"  # 2 per load
    assert gate({"tensor": 0}, {"math": 8, "loads": 0, "instructions": 12}).says == "neutral"  # too small a body
    assert gate({}, None) is None


def measured(compute=None, memory=None, eligible=None, stalls=None) -> dict:
    """Lint's `measured` object with these figures (Speed Of Light, Scheduler, Warp State)."""
    return {"throughput": {"compute_pct": compute, "memory_pct": memory}, "scheduler": {"eligible_warps": eligible},
            "warp_state": {"stalls": stalls or {}}, "memory": None, "missing_sections": []}


@pytest.mark.parametrize("figures, says", [
    (measured(85.0, 20.0), "no_gain"),
    (measured(30.0, 91.0), "no_gain"),
    (measured(30.0, 40.0, 0.4, {"long_scoreboard": 9.0, "wait": 2.0}), "gain"),
    (measured(30.0, 40.0, 1.6, {"long_scoreboard": 9.0, "wait": 2.0}), "neutral"),  # enough eligible warps
    (measured(30.0, 40.0, 0.4, {"barrier": 9.0, "long_scoreboard": 2.0}), "neutral"),  # barriers, not memory
    (measured(30.0, 55.0, 0.4), "gain"),  # no breakdown
    (measured(30.0, 65.0, 0.4), "neutral"),
    (measured(30.0, 55.0, 1.4), "neutral"),
])
def test_the_profile_gate_tells_saturated_from_latency_bound(figures, says):
    [evidence] = evidence_profile.profile(evidence_profile.figures(figures))
    assert evidence.says == says


def test_the_profile_figures_are_read_from_lints_measured_object():
    measured = {"achieved_occupancy": 0.5, "throughput": {"compute_pct": 42.0, "memory_pct": 81.5, "dram_pct": None},
                "scheduler": {"eligible_warps": 0.7}, "warp_state": {"stalls": {"long_scoreboard": 3.2}},
                "memory": None}
    found = evidence_profile.figures(measured)
    assert found.throughput.compute_pct == 42.0 and found.throughput.memory_pct == 81.5
    assert found.warp_state.stalls == (("long_scoreboard", 3.2),)
    assert found.scheduler.eligible_warps == 0.7 and found.throughput.dram_pct is None and found.memory is None
    assert evidence_profile.figures({"achieved_occupancy": 0.5, "throughput": None, "warp_state": None}) is None


def test_the_profile_gate_reads_each_figure_under_the_name_the_export_records_it():
    """From a profiled launch's metrics (readers/ncu.py's keys) through lint's `measured` object to
    the gate's evidence, by measured_figures' records alone: a figure renamed on one side and not the
    other fails here."""
    from tuneadvise.advisor.measured_figures import SECTIONS, figures_document, launch_figures
    from tuneadvise.advisor.readers.ncu import ProfiledLaunch

    def gate(**metrics):
        launch = ProfiledLaunch("k.csv", 1, "1", "app", 0, "k", (256,), (4096,), "9.0", metrics=metrics)
        figures = launch_figures(launch)
        read = evidence_profile.figures(figures_document(figures))
        assert read == figures  # the document reads back into the very records
        return evidence_profile.profile(read)[0]

    every = {key: float(n + 1) for n, (_, fields) in enumerate(SECTIONS.values()) for key in fields.values()}
    assert gate(**every, stall_wait=2.0).says == "neutral"  # every figure, none of them deciding
    assert gate(sol_compute_pct=85.0, sol_memory_pct=20.0).value == {"compute_throughput_pct": 85.0}
    assert gate(sol_compute_pct=20.0, sol_memory_pct=30.0, sol_dram_pct=88.0).value == {"memory_throughput_pct": 88.0}
    latency = gate(sol_compute_pct=20.0, sol_memory_pct=30.0, eligible_warps_per_scheduler=0.4,
                   stall_long_scoreboard=9.0, stall_wait=1.0)
    assert latency.says == "gain" and latency.value["eligible_warps_per_scheduler"] == 0.4
    assert latency.value["dominant_stall"] == {"reason": "long_scoreboard", "share": 0.9}


def test_a_grid_already_resident_whole_cannot_use_more_blocks_per_sm():
    assert evidence_launch.resident_grid(4, 4, 132).says == "no_gain"
    assert evidence_launch.resident_grid(528, 4, 132).says == "no_gain"
    assert evidence_launch.resident_grid(529, 4, 132).says == "neutral"
    assert evidence_launch.resident_grid(None, 4, 132) is None


def test_a_block_size_that_adds_a_tail_or_single_blocks_at_barriers_is_no_gain():
    # 132 SMs, 256-thread blocks at 8/SM: 1056 blocks, exactly one wave; 512-thread blocks at 3/SM: 528 blocks
    # in waves of 396, a partial second wave.
    [tail] = evidence_launch.block_change(1056 * 256, (256, 8), (512, 3), 132, barriers=0)
    assert tail.says == "no_gain"
    assert evidence_launch.block_change(1056 * 256, (256, 8), (128, 16), 132, barriers=0) == []
    [single] = evidence_launch.block_change(200 * 1024, (1024, 2), (1024, 2), 132, barriers=1)
    assert single.says == "no_gain" and "__syncthreads" in single.why


@pytest.mark.parametrize("name, found", [
    ("sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4", "CUTLASS / xmma"),
    ("ampere_sgemm_128x64_tn", "cuBLAS / cuBLASLt"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int, T2, T3)",
     "PyTorch (at::native)"),
    ("_ZN2at6native29vectorized_elementwise_kernelILi4EEEviT0_T1_", "PyTorch (at::native)"),
    ("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64>>(Flash_fwd_params)", "flash-attention"),
    ("void cub::DeviceReduceKernel<int>(int*)", "Thrust / CUB"),
    ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "NCCL"),
    ("triton_poi_fused_add_0", None), ("_Z10sgemm_tileILi8ELi8EEvPKfS1_Pfiii", None), ("stat_kernel", None),
    ("matmul_kernel", None), ("gemm_kernel", None),
])
def test_library_kernels_are_told_by_name_and_user_kernels_are_not(name, found):
    assert library_of(name) == found
    assert (library(name) is None) == (found is None)


@pytest.mark.parametrize("text, message", [
    ("[[library]]\nname = 'x'\npatterns = ['(']", "pattern '('"),
    ("[[library]]\nname = ''\npatterns = ['a']", "non-empty name"),
    ("[[library]]\nname = 'x'\npatterns = []", "non-empty list"),
    ("[[library]]\nname = 'x'\npatterns = ['a']\nextra = 1", "exactly"),
    ("[other]\n", "[[library]] entries only"),
    ("not toml [", "not TOML"),
])
def test_the_library_data_is_validated(text, message):
    with pytest.raises(LibraryDataError, match=message.replace("[", r"\[").replace("(", r"\(")):
        parse_library(text)


@pytest.mark.parametrize("module", ["verdict", "judge", "occupancy_step"])
def test_the_modules_examples_hold(module):
    import doctest
    import importlib

    failed, tried = doctest.testmod(importlib.import_module(f"tuneadvise.advisor.advice.{module}"))
    assert tried and not failed


def test_judge_combines_every_gate_that_applies():
    from tuneadvise.advisor.advice.judge import Known, block_size_verdict, register_cap_verdict
    from tuneadvise.advisor.launch import LaunchConfig
    from tuneadvise.specs.resolve import resolve_arch

    arch = resolve_arch("sm_90")
    launch = LaunchConfig(registers=56, block_size=256, grid_size=8192, spill_stores=0, spill_loads=0)
    latency = evidence_profile.figures(measured(20.0, 30.0, 0.3, {"long_scoreboard": 8.0, "wait": 1.0}))
    clean = {"registers": 48, "spill_stores": 0, "spill_loads": 0}
    assert register_cap_verdict(Known(arch, launch, 132, profile=latency), clean).outcome == "likely_gain"
    assert register_cap_verdict(Known(arch, launch, 132), clean).outcome == "unknown"
    assert register_cap_verdict(Known(arch, launch, 132, profile=latency, instructions={"tensor": 8}),
                                clean).outcome == "unknown"
    assert register_cap_verdict(Known(arch, launch, 132, profile=latency, name="ampere_sgemm_128x64_nn"),
                                clean).outcome == "unknown"
    assert register_cap_verdict(Known(arch, launch._replace(grid_size=100), 132, profile=latency),
                                clean).outcome == "unknown"  # the whole grid is resident already
    # A block size that does not raise the resident warps is no gain, whatever the profile says.
    assert block_size_verdict(Known(arch, launch, 132, profile=latency), 512, 4096).outcome == "unknown"
    assert block_size_verdict(Known(arch, launch, 132, profile=latency), 128, 16384).outcome == "likely_gain"


def test_fewer_resident_warps_is_a_loss_unless_the_grid_leaves_sms_idle():
    from tuneadvise.advisor.engine.occupancy import occupancy
    from tuneadvise.advisor.launch import LaunchConfig
    from tuneadvise.specs.resolve import resolve_arch

    arch = resolve_arch("sm_90")
    full = occupancy(arch, LaunchConfig(registers=32, block_size=256))  # 64 warps
    half = occupancy(arch, LaunchConfig(registers=32, block_size=32))  # 32 blocks of one warp
    assert evidence_launch.fewer_warps(full, half, 4096, 132).says == "loss"
    assert evidence_launch.fewer_warps(full, half, 32, 132).says == "no_gain"  # 32 blocks: 100 SMs idle
    assert evidence_launch.fewer_warps(half, full, 4096, 132) is None


@pytest.mark.parametrize("before, after, barriers, says", [
    (1, 2, 3, "gain"), (1, 2, 0, None), (2, 3, 3, None), (1, 1, 3, None)])
def test_a_second_block_relieves_a_kernel_with_barriers_at_one_block(before, after, barriers, says):
    found = evidence_launch.barrier_relief(before, after, barriers)
    assert (found.says if found else None) == says


def test_littles_law_says_how_many_warps_feed_dram():
    from tuneadvise.advisor import memory_parallelism
    from tuneadvise.specs.resolve import resolve

    product = resolve("h100-sxm").product
    found = evidence_profile.warps_wanted(product, 32, 16)
    expected = memory_parallelism.advice(product, 32, 16)["warps_for_target"]
    assert found.says == "neutral" and found.value["warps_per_sm_wanted"] == expected
    assert evidence_profile.warps_wanted(None, 32, 16) is None


def test_a_grid_resident_whole_is_said_in_agreeing_numbers():
    from tuneadvise.advisor.advice.evidence_launch import resident_grid

    assert resident_grid(1, 1, 1).why == "its one block is already resident at once (1 block/SM x 1 SM)"
    assert resident_grid(200, 2, 132).why == "all 200 blocks of the grid are already resident at once (2 blocks/SM x 132 SMs)"
