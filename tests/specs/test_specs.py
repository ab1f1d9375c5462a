"""The shipped spec files validate, and every number carries a known source."""

import json
import re
from pathlib import Path

import pytest

from tuneadvise.specs.catalog import (
    ARCH_INT_FIELDS,
    DATA_DIR,
    UnknownArchError,
    describe_source,
    family_files,
    shipped_catalog,
)
from tuneadvise.specs.models import SpecFileError, validate_family_document

from ..helpers import ROOT, TESTS


@pytest.mark.parametrize("path", family_files(), ids=lambda p: Path(p).stem)
def test_family_file_validates(path):
    validate_family_document(Path(path))


def test_families_are_discovered_from_the_data_folder(tmp_path, monkeypatch):
    # A new family is one data file (and its compiled form, made by specs/compile.py): copy the
    # shipped folder, add a family, compile, and the catalog has it.
    import shutil

    from tuneadvise.specs import catalog, compile

    data = tmp_path / "data"
    shutil.copytree(DATA_DIR, data)
    volta = (data / "volta.toml").read_text()
    (data / "zz-test.toml").write_text(volta.replace('family = "volta"', 'family = "zz-test"')
                                       .replace('cc = "7.0"', 'cc = "7.9"').replace('cc = "7.2"', 'cc = "7.8"')
                                       .replace('default_cc = "7.0"', 'default_cc = "7.9"'))
    assert str(data / "zz-test.toml") in family_files(str(data))
    assert "zz-test.json" in compile.write_compiled(str(data))
    monkeypatch.setattr(catalog, "DATA_DIR", str(data))
    caches = (catalog.shipped_catalog, catalog._index, catalog._family_document, catalog._catalog_of)
    for cached in caches:
        cached.cache_clear()
    try:
        found = catalog.shipped_catalog()
        assert "7.9" in found.archs and found.archs["7.9"].family == "zz-test"
        assert catalog.resolve_shipped("sm_79").arch.family == "zz-test"
    finally:
        for cached in caches:
            cached.cache_clear()


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


@pytest.mark.parametrize("typed, meant, never", [
    ("l40x", ["l40s"], ["l4"]),  # another number is another product: L40S, never L4
    ("rtx4080", [], ["rtx4090", "rtx-4090"]),
    ("sm_91", [], ["sm_90"]),
    ("a1000", [], ["a100"]),
    ("h100sxm", ["h100-sxm"], []),
    ("hoper", ["hopper"], []),
])
def test_suggestions_keep_the_numbers_typed(typed, meant, never):
    with pytest.raises(UnknownArchError) as info:
        shipped_catalog().resolve(typed)
    assert info.value.suggestions[: len(meant)] == meant
    assert not set(never) & set(info.value.suggestions)


def test_loading_the_catalog_writes_nothing(tmp_path, monkeypatch):
    # The parsed copy once kept in ~/.cache/tuneadvise was never cleaned and bought no
    # measurable start-up (benchmarks/startup.py); loading now only reads the data files.
    from tuneadvise.specs import catalog

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    catalog.shipped_catalog.cache_clear()
    try:
        assert "9.0" in catalog.shipped_catalog().archs
    finally:
        catalog.shipped_catalog.cache_clear()
    assert list(tmp_path.iterdir()) == []


def test_records_hash_and_compare_by_value():
    # An Arch (and a Product) is hashed by its values: equal specs must key a cache alike.
    from tuneadvise.specs.catalog import Catalog, shipped_documents

    again = Catalog()
    for doc in shipped_documents():
        again.add_family(doc)
    for cc, arch in shipped_catalog().archs.items():
        twin = again.archs[cc]
        assert twin is not arch and twin == arch and hash(twin) == hash(arch)
        assert arch.source_of("warp_size") == arch.sources["warp_size"]
    for name, product in shipped_catalog().products.items():
        assert hash(again.products[name]) == hash(product) and again.products[name] == product
    volta = shipped_catalog().archs["7.0"]
    assert volta._replace(registers_per_sm=1) != volta
    assert len({volta, again.archs["7.0"], volta._replace(registers_per_sm=1)}) == 2


@pytest.mark.parametrize("value, message", [
    ("31", "warp_size must be 32"),
    ('"32"', "valid integer"),
    ("32.0", "valid integer"),
])
def test_spec_validate_rejects_impossible_or_coerced_warp_sizes(tmp_path, value, message):
    # A warp of 31 threads is impossible, and "32" or 32.0 are not whole numbers a spec file may give.
    from click.testing import CliRunner

    from tuneadvise.cli.main import cli

    volta = (ROOT / "specs" / "data" / "volta.toml").read_text()
    assert "warp_size = { value = 32," in volta
    path = tmp_path / "volta.toml"
    path.write_text(volta.replace("warp_size = { value = 32,", f"warp_size = {{ value = {value},"))
    result = CliRunner().invoke(cli, ["specs", "validate", str(path)])
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output


def test_spec_validate_rejects_allocation_units_that_are_not_powers_of_two(tmp_path):
    from click.testing import CliRunner

    from tuneadvise.cli.main import cli

    volta = (ROOT / "specs" / "data" / "volta.toml").read_text()
    path = tmp_path / "volta.toml"
    changed = volta.replace("register_allocation_unit = { value = 256,", "register_allocation_unit = { value = 250,")
    assert changed != volta
    path.write_text(changed)
    result = CliRunner().invoke(cli, ["specs", "validate", str(path)])
    assert result.exit_code == 2 and "register_allocation_unit must be a power of two" in result.output
    # the file is the command's argument, not --spec-file: the line names the file alone
    assert result.output.startswith(f"tuneadvise: error: {path}"), result.output
    spec_file = CliRunner().invoke(cli, ["occupancy", "--spec-file", str(path), "--arch", "volta", "-r", "32", "-b", "256"])
    assert spec_file.exit_code == 2 and spec_file.output.startswith(f"tuneadvise: error: --spec-file: {path}")


def test_specs_listing_keeps_every_typed_name_whole_at_80_columns(monkeypatch):
    # Users type the product names `specs` lists (a100-sxm4-...): a narrow terminal must not cut them.
    from click.testing import CliRunner

    from tuneadvise.cli.main import cli

    monkeypatch.setenv("COLUMNS", "80")
    out = CliRunner().invoke(cli, ["specs"]).output
    assert "…" not in out and all(len(line) <= 80 for line in out.splitlines())
    catalog = shipped_catalog()
    for name in [p.name for p in catalog.products.values()] + [a.sm for a in catalog.archs.values()]:
        assert name in out.split(), name


def test_every_shipped_arch_states_the_headers_behaviour_with_its_function():
    # What cuda_occupancy.h switches on the compute capability for is spec data, cited
    # to the header function that does it (the differential test holds the values to the header).
    from tuneadvise.specs.catalog import ARCH_BEHAVIOUR_FIELDS

    for arch in shipped_catalog().sorted_archs():
        for key in ARCH_BEHAVIOUR_FIELDS:
            assert arch.sources[key].startswith("occ-h#cudaOcc"), (arch.cc, key)
        assert arch.max_registers_per_thread <= arch.header_max_registers_per_thread
        if not arch.shared_mem_opt_in:
            assert arch.shared_mem_per_block_optin == arch.shared_mem_per_block


def _volta_with(tmp_path, old, new):
    volta = (Path(DATA_DIR) / "volta.toml").read_text()
    assert old in volta
    path = tmp_path / "volta.toml"
    path.write_text(volta.replace(old, new))
    return path


def test_the_engine_reads_the_headers_behaviour_from_the_spec(tmp_path):
    # The engine once hard-coded `major >= 7` for opt-in; a spec that says 7.0 has no opt-in
    # (and so no larger opt-in limit) must be obeyed, and the note must say why.
    from tuneadvise.advisor import analyze
    from tuneadvise.specs.models import load_user_spec

    path = _volta_with(tmp_path, 'shared_mem_opt_in = { value = true,', 'shared_mem_opt_in = { value = false,')
    path.write_text(path.read_text().replace("value = 98304, source = \"volta-guide#4.3.2\"",
                                             "value = 49152, source = \"volta-guide#4.3.2\""))
    catalog, _ = load_user_spec(path)
    arch = catalog.archs["7.0"]
    assert not arch.shared_mem_opt_in and arch.origin == str(path)
    result = analyze(arch, registers=32, block_size=256, dynamic_shared_mem=64 * 1024, opt_in=True)
    assert not result.launchable and result.errors[0].code == "shared-mem-per-block"
    assert any("opt-in has no effect" in note for note in result.notes)
    shipped = analyze("7.0", registers=32, block_size=256, dynamic_shared_mem=64 * 1024, opt_in=True)
    assert shipped.launchable


def test_a_user_spec_may_leave_the_behaviour_to_the_shipped_compute_capability(tmp_path):
    from tuneadvise.specs.models import load_user_spec

    volta = (Path(DATA_DIR) / "volta.toml").read_text()
    trimmed = "\n".join(line for line in volta.splitlines()
                        if not line.startswith(("header_max_registers_per_thread", "shared_mem_opt_in",
                                                "reserved_shared_mem_in_block_limit")))
    path = tmp_path / "volta.toml"
    path.write_text(trimmed)
    catalog, added = load_user_spec(path)
    shipped = shipped_catalog().archs["7.0"]
    assert (added[0].header_max_registers_per_thread, added[0].shared_mem_opt_in,
            added[0].reserved_shared_mem_in_block_limit) == (256, True, False)
    assert added[0].sources["shared_mem_opt_in"] == shipped.sources["shared_mem_opt_in"]
    path.write_text(trimmed.replace('cc = "7.2"', 'cc = "7.9"'))
    with pytest.raises(SpecFileError, match="7.9: header_max_registers_per_thread missing"):
        load_user_spec(path)


@pytest.mark.parametrize("old, new, message", [
    ('shared_mem_opt_in = { value = true,', 'shared_mem_opt_in = { value = false,',
     "shared_mem_per_block_optin must equal shared_mem_per_block where shared_mem_opt_in is false"),
    ('header_max_registers_per_thread = { value = 256,', 'header_max_registers_per_thread = { value = 254,',
     "greater than or equal to 255"),
    ('shared_mem_opt_in = { value = true,', 'shared_mem_opt_in = { value = 1,', "valid boolean"),
])
def test_behaviour_fields_are_validated(tmp_path, old, new, message):
    with pytest.raises(SpecFileError, match=message):
        validate_family_document(_volta_with(tmp_path, old, new))


def _every_citation():
    """(where, source reference) of every sourced value: arch fields, products, disagreements."""
    catalog = shipped_catalog()
    for arch in catalog.sorted_archs():
        for key, ref in arch.sources.items():
            yield f"{arch.cc}.{key}", ref
        for d in arch.disagreements:
            for _, ref in d.values:
                yield f"{arch.cc}.{d.field} (disagreement)", ref
    for product in catalog.products.values():
        for key, ref in product.sources.items():
            yield f"{product.name}.{key}", ref
        for d in product.disagreements:
            for _, ref in d.values:
                yield f"{product.name}.{d.field} (disagreement)", ref


def test_every_sourced_value_cites_a_section():
    # A citation a reader can check names the section, not only the document.
    bare = [f"{where}: {ref}" for where, ref in _every_citation() if not ref.partition("#")[2].strip()]
    assert not bare, "\n".join(bare)


def test_source_kinds_are_right():
    from tuneadvise.specs.catalog import sources

    known = sources()
    assert {entry["kind"] for entry in known.values()} <= {
        "primary", "reference-implementation", "secondary", "derived", "inferred", "project", "measured", "unconfirmed"}
    assert known["inferred"]["kind"] == "inferred"
    assert known["unconfirmed"]["kind"] == "unconfirmed"
    # A family's values cite its own tuning guide, never another family's (Hopper cited Blackwell's).
    guide_of = {"fermi-guide": "fermi", "volta-guide": "volta", "turing-guide": "turing", "blackwell-guide": "blackwell"}
    catalog = shipped_catalog()
    for arch in catalog.sorted_archs():
        for key, ref in arch.sources.items():
            owner = guide_of.get(ref.partition("#")[0])
            assert owner in (None, arch.family), f"{arch.cc}.{key} ({arch.family}) cites {ref}"
    for where, ref in _every_citation():
        ident, _, section = ref.partition("#")
        assert ident in known, f"{where}: {ref}"
        # A value reasoned from others is an inference, not a survey or a formula: it says why.
        if ident in ("peer-survey", "derived"):
            assert not re.search(r"\bsame\b|\bassumed?\b|\btaken to\b|only;", section, re.I), f"{where}: {ref}"
        if ident == "inferred":
            assert len(section.split()) >= 8, f"{where}: an inference gives its reasoning: {ref}"


def test_specs_show_names_the_driver_as_the_provenance_of_native_values():
    # A value the driver gave must not be shown as the spec's: the provenance is what users trust.
    from click.testing import CliRunner

    from tuneadvise.cli.main import cli
    from tuneadvise.specs.catalog import read_toml

    native = TESTS / "fixtures" / "h100" / "native.toml"
    result = CliRunner().invoke(cli, ["specs", "show", "native", "--spec-file", str(native), "--format", "json"])
    assert result.exit_code == 0, result.output
    values = json.loads(result.output)["values"]
    doc = read_toml(native)
    for key, item in values.items():
        written = doc["arch"][0].get(key)
        expected = written["source"].partition("#")[0] if isinstance(written, dict) else None
        if expected in ("driver", "measured"):
            assert item["provenance"] == expected, key
        else:
            assert item["provenance"] == "spec", key
    assert values["registers_per_block"]["provenance"] == "driver"
    assert values["register_allocation_unit"]["provenance"] == "spec"
    shipped = json.loads(CliRunner().invoke(cli, ["specs", "show", "sm_90", "--format", "json"]).output)["values"]
    assert {item["provenance"] for item in shipped.values()} == {"spec"}


@pytest.mark.parametrize("name", ["h200", "sm_86", "fermi"])
def test_specs_show_keeps_every_field_name_whole_at_80_columns(monkeypatch, name):
    # Field names are the keys of --format json and of spec files: a narrow terminal must not cut them.
    from click.testing import CliRunner

    from tuneadvise.cli.main import cli

    monkeypatch.setenv("COLUMNS", "80")
    out = CliRunner().invoke(cli, ["specs", "show", name]).output
    assert "…" not in out and all(len(line) <= 80 for line in out.splitlines())
    document = json.loads(CliRunner().invoke(cli, ["specs", "show", name, "--format", "json"]).output)
    words = out.split()
    for key in [*document["values"], *document.get("product", {}).get("values", {})]:
        assert key in words, key


def _every_shipped_name():
    from click.testing import CliRunner

    from tuneadvise.cli.main import cli

    listing = json.loads(CliRunner().invoke(cli, ["specs", "--format", "json"]).output)
    return [a["arch"] for a in listing["architectures"]] + [p["name"] for p in listing["products"]]


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_specs_show_answers_for_every_shipped_architecture_and_product(fmt):
    # Found by the fuzz campaign: a product's list value (the H100's measured GPC layout) crashed the table.
    from click.testing import CliRunner

    from tuneadvise.cli.main import cli

    names = _every_shipped_name()
    assert "h100-sxm" in names and "sm_110" in names
    for name in names:
        result = CliRunner().invoke(cli, ["specs", "show", name, "--format", fmt])
        assert result.exit_code == 0, (name, result.output[-500:])


@pytest.mark.parametrize("name", ["sm_20", "sm_35", "sm_61", "sm_70", "sm_89", "sm_90", "sm_110", "sm_120"])
def test_specs_show_json_is_a_spec_file_with_the_same_values(name, tmp_path):
    """`specs show X --format json > f.json; specs validate f.json` works, and the file gives
    the architecture back value for value."""
    from click.testing import CliRunner

    from tuneadvise.cli.main import cli
    from tuneadvise.specs.catalog import shipped_catalog
    from tuneadvise.specs.models import load_user_spec
    from tuneadvise.specs.records import ARCH_BEHAVIOUR_FIELDS, ARCH_INT_FIELDS, ARCH_OPTIONAL_INT_FIELDS

    shown = CliRunner().invoke(cli, ["specs", "show", name, "--format", "json"]).stdout
    path = tmp_path / "mine.json"
    path.write_text(shown)
    assert CliRunner().invoke(cli, ["specs", "validate", str(path)]).exit_code == 0
    _, (loaded,) = load_user_spec(path)
    shipped = shipped_catalog().resolve(name).arch
    for field in (*ARCH_INT_FIELDS, *ARCH_OPTIONAL_INT_FIELDS, *ARCH_BEHAVIOUR_FIELDS, "shared_mem_configs",
                  "shared_mem_model"):
        assert getattr(loaded, field) == getattr(shipped, field), field


def test_specs_show_of_a_product_is_a_spec_file_with_the_product(tmp_path):
    from click.testing import CliRunner

    from tuneadvise.cli.main import cli
    from tuneadvise.specs.models import load_user_spec

    path = tmp_path / "mine.json"
    path.write_text(CliRunner().invoke(cli, ["specs", "show", "h100-sxm", "--format", "json"]).stdout)
    catalog, _ = load_user_spec(path)
    product = catalog.resolve("h100-sxm").product
    assert (product.get("sm_count"), product.get("memory_bandwidth_gbs")) == (132, 3350)
