"""analyze_compiled names a cubin's kernel as the command line does: by its mangled name, its
demangled name, its base name or a glob over them; a name that matches none or several is
bad input naming the kernels there."""

import pytest

from tuneadvise import analyze_compiled
from tuneadvise.advisor.inputs import InputError

from ..helpers import TESTS

CUBIN = TESTS / "fixtures" / "lint" / "lint_sm_100.cubin"  # nvcc's output for sm_100 (see tests/fixtures/lint)


@pytest.mark.parametrize("name", ["_Z8spillingPKfPfi", "spilling", "spilling(float const*, float*, int)", "spill*"])
def test_a_kernel_is_found_by_any_of_its_names(name):
    by_mangled = analyze_compiled(CUBIN, arch="sm_100", block_size=128, kernel="_Z8spillingPKfPfi")
    assert analyze_compiled(CUBIN, arch="sm_100", block_size=128, kernel=name) == by_mangled


def test_a_template_instance_by_its_signature():
    floats = analyze_compiled(CUBIN, arch="sm_100", block_size=128, kernel="saxpy<float*")
    assert floats == analyze_compiled(CUBIN, arch="sm_100", block_size=128, kernel="_Z5saxpyIfLi4EEvT_PKS0_PS0_i")


@pytest.mark.parametrize("name", ["saxpy", "nothing_here"])
def test_none_or_several_matches_are_bad_input(name):
    with pytest.raises(InputError, match="^kernel: .*holds .*_Z5saxpyIfLi4EEvT_PKS0_PS0_i"):
        analyze_compiled(CUBIN, arch="sm_100", block_size=128, kernel=name)
