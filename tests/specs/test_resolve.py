"""The one architecture resolver (specs/resolve.py) and the one hierarchy of input errors:
the library names its arguments, the command line its options."""

import pytest
from click.testing import CliRunner

from tuneadvise.advisor import InputError, analyze
from tuneadvise.cli.main import cli
from tuneadvise.specs.names import UnknownArchError
from tuneadvise.specs.releases import UnknownReleaseError
from tuneadvise.specs.resolve import resolve, resolve_arch


def test_names_spec_files_and_releases_resolve_in_one_place(tmp_path):
    assert resolve("h100-sxm").product.title.startswith("H100")
    assert resolve("hopper").arch.sm == "sm_90" and resolve("hopper").note
    assert resolve_arch("sm_70", "12.9").cuda_release == "12.9"
    arch = resolve_arch("sm_80")
    assert resolve(arch).arch is arch


def test_native_is_only_what_the_hook_gives():
    with pytest.raises(UnknownArchError):
        resolve("native")
    marker = resolve("sm_75")
    assert resolve("native", native=lambda: marker) is marker


def test_every_bad_architecture_is_an_input_error_naming_the_argument():
    with pytest.raises(InputError) as caught:
        analyze("hoper", registers=32, block_size=128)
    assert isinstance(caught.value, UnknownArchError) and caught.value.field == "arch"
    assert str(caught.value).startswith("arch: unknown architecture 'hoper'")
    with pytest.raises(InputError) as caught:
        analyze("sm_90", cuda="11.0", registers=32, block_size=128)
    assert isinstance(caught.value, UnknownReleaseError) and str(caught.value).startswith("cuda: unknown")
    with pytest.raises(InputError, match="^arch: missing"):
        resolve(None)


def test_the_command_line_names_the_option():
    result = CliRunner().invoke(cli, ["occupancy", "--arch", "hoper", "-r", "32", "-b", "128"])
    assert result.exit_code == 2
    assert result.stderr.startswith("tuneadvise: error: --arch: unknown architecture 'hoper'")
    result = CliRunner().invoke(cli, ["occupancy", "--arch", "sm_90", "--cuda", "11.0", "-r", "32", "-b", "128"])
    assert result.exit_code == 2 and result.stderr.startswith("tuneadvise: error: --cuda: unknown")
