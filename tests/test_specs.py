"""The shipped spec files validate, and every number carries a known source."""

from pathlib import Path

import pytest

from tuneadvise.specs.catalog import (
    ARCH_INT_FIELDS,
    DATA_DIR,
    FAMILIES,
    UnknownArchError,
    describe_source,
    shipped_catalog,
)
from tuneadvise.specs.models import SpecFileError, validate_family_document


@pytest.mark.parametrize("family", FAMILIES)
def test_family_file_validates(family):
    validate_family_document(Path(DATA_DIR) / f"{family}.toml")


def test_every_arch_value_has_a_resolvable_source():
    for arch in shipped_catalog().sorted_archs():
        for key in ARCH_INT_FIELDS:
            ref = arch.sources.get(key)
            assert ref, f"{arch.cc}.{key} has no source"
            assert describe_source(ref) != ref, f"{arch.cc}.{key}: unknown source {ref}"


def test_every_product_value_has_a_source():
    for product in shipped_catalog().products.values():
        assert set(product.values) == set(product.sources)
        assert product.cc in shipped_catalog().archs


def test_validation_rejects_unknown_fields_and_sources(tmp_path):
    text = (Path(DATA_DIR) / "turing.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('source = "turing-guide#4.1.3" }', 'source = "blog" }', 1))
    with pytest.raises(SpecFileError, match="unknown source 'blog'"):
        validate_family_document(bad)
    bad.write_text(text + '\n[extra]\nthing = 1\n')
    with pytest.raises(SpecFileError, match="extra"):
        validate_family_document(bad)


def test_unknown_arch_suggestions():
    with pytest.raises(UnknownArchError) as info:
        shipped_catalog().resolve("amperee")
    assert "ampere" in info.value.suggestions


def test_cache_round_trip(tmp_path, monkeypatch):
    from tuneadvise.specs import catalog

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    paths = [Path(DATA_DIR) / f"{f}.toml" for f in FAMILIES]
    first = catalog.read_toml_cached(paths)
    assert list((tmp_path / "tuneadvise").glob("data-*.marshal"))
    assert catalog.read_toml_cached(paths) == first == [catalog.read_toml(p) for p in paths]
    assert not list((tmp_path / "tuneadvise").glob("*.tmp"))


@pytest.mark.parametrize("value, message", [
    ("31", "warp_size must be 32"),
    ('"32"', "valid integer"),
    ("32.0", "valid integer"),
])
def test_spec_validate_rejects_impossible_or_coerced_warp_sizes(tmp_path, value, message):
    # Issue 15 item 11 / issue 20 item 8: 31 was accepted, and "32" or 32.0 were coerced.
    from click.testing import CliRunner

    from tuneadvise.cli.main import cli

    volta = (Path(__file__).resolve().parents[1] / "specs" / "data" / "volta.toml").read_text()
    assert "warp_size = { value = 32," in volta
    path = tmp_path / "volta.toml"
    path.write_text(volta.replace("warp_size = { value = 32,", f"warp_size = {{ value = {value},"))
    result = CliRunner().invoke(cli, ["specs", "validate", str(path)])
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output


def test_spec_validate_rejects_allocation_units_that_are_not_powers_of_two(tmp_path):
    from click.testing import CliRunner

    from tuneadvise.cli.main import cli

    volta = (Path(__file__).resolve().parents[1] / "specs" / "data" / "volta.toml").read_text()
    path = tmp_path / "volta.toml"
    changed = volta.replace("register_allocation_unit = { value = 256,", "register_allocation_unit = { value = 250,")
    assert changed != volta
    path.write_text(changed)
    result = CliRunner().invoke(cli, ["specs", "validate", str(path)])
    assert result.exit_code == 2 and "register_allocation_unit must be a power of two" in result.output
