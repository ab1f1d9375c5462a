"""The batch line writer produces exactly the text of the occupancy document,
so the document's layout stays the one source of truth."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tuneadvise.advisor.engine.occupancy import occupancy
from tuneadvise.advisor.launch import LaunchConfig
from tuneadvise.advisor.report import compact_json, kernel_json_line, occupancy_document, occupancy_json_line
from tuneadvise.specs.catalog import shipped_catalog

CATALOG = shipped_catalog()
ARCHS = sorted(CATALOG.archs.values(), key=lambda a: (a.major, a.minor))


def dumped(result, dims, note, product):
    return json.dumps(occupancy_document(result, dims, note, product), separators=(",", ":"))


@settings(max_examples=600, deadline=None)
@given(
    arch=st.sampled_from(ARCHS),
    registers=st.integers(0, 255),
    block=st.integers(1, 1024),
    static=st.integers(0, 64 * 1024),
    dynamic=st.integers(0, 240 * 1024),
    carveout=st.sampled_from([-1, 0, 37, 100]),
    opt_in=st.booleans(),
    barriers=st.integers(0, 16),
    bounds=st.one_of(st.none(), st.integers(1, 1024)),
    note=st.sampled_from([None, 'a "quoted" note é']),
    product=st.sampled_from([None, "h100-sxm"]),
    dims=st.sampled_from([(), (32, 8), (4, 4, 4)]),
)
def test_the_batch_line_is_the_document_byte_for_byte(
    arch, registers, block, static, dynamic, carveout, opt_in, barriers, bounds, note, product, dims
):
    kernel = LaunchConfig(
        registers=registers,
        block_size=block,
        static_shared_mem=static,
        dynamic_shared_mem=dynamic,
        carveout=carveout,
        opt_in=opt_in,
        barriers=barriers,
        max_threads_per_block=bounds,
    )
    result = occupancy(arch, kernel)
    assert occupancy_json_line(result, dims, note, product) == dumped(result, dims, note, product)
    assert kernel_json_line(arch, kernel, dims, note, product) == (dumped(result, dims, note, product), result.launchable)


def test_every_architecture_and_every_kind_of_launch_failure():
    seen_errors, seen_notes = set(), 0
    for arch in ARCHS:
        for kernel in (
            LaunchConfig(32, 256),
            LaunchConfig(255, 1024),
            LaunchConfig(registers=64, block_size=128, static_shared_mem=50000, dynamic_shared_mem=0),
            LaunchConfig(registers=32, block_size=128, static_shared_mem=0, dynamic_shared_mem=60000),
            LaunchConfig(registers=32, block_size=128, static_shared_mem=0, dynamic_shared_mem=300000, carveout=100, opt_in=True),
            LaunchConfig(32, 512, max_threads_per_block=256),
            LaunchConfig(32, 128, carveout=50, opt_in=True),
            LaunchConfig(0, 1, barriers=0),
        ):
            result = occupancy(arch, kernel)
            seen_errors |= {e.code for e in result.errors}
            seen_notes += len(result.notes)
            assert occupancy_json_line(result, (), None, None) == dumped(result, (), None, None)
    assert {
        "registers-per-thread",
        "registers-per-block",
        "static-shared-mem",
        "opt-in-required",
        "shared-mem-per-block",
        "launch-bounds",
    } <= seen_errors
    assert seen_notes > 0


def test_kernels_that_share_an_outcome_text_keep_their_own_inputs():
    # kernel_json_line reuses the text after the inputs for launchable kernels with the same
    # limits, allocations, warps per block and notes: sweep enough kernels that most lines reuse one.
    from tuneadvise.advisor import report

    report._BLOCKS.clear()
    launchable = 0
    for arch in ARCHS:
        for registers in (0, 1, 57, 60, 64, 65, 200, 255):  # several share an allocation
            for block in (64, 225, 240, 250, 256):  # the last four are 8 warps
                for kernel in (
                    LaunchConfig(registers, block),
                    LaunchConfig(
                        registers=registers,
                        block_size=block,
                        static_shared_mem=1000,
                        dynamic_shared_mem=3000,
                        carveout=40,
                        opt_in=True,
                        barriers=2,
                    ),
                ):
                    result = occupancy(arch, kernel)
                    line, launches = kernel_json_line(arch, kernel, (block,), None, "p")
                    assert (line, launches) == (dumped(result, (block,), None, "p"), result.launchable)
                    launchable += launches
    assert len(report._BLOCKS) < launchable // 2 and launchable > 100


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(JSON_VALUES)
def test_compact_json_is_json_dumps(value):
    assert compact_json(value) == json.dumps(value, separators=(",", ":"))


def test_compact_json_refuses_what_json_refuses():
    with pytest.raises(TypeError, match="not JSON serializable"):
        compact_json({"x": object()})
