"""A PyTorch model's Nsight Compute export (recorded on an H200: cuDNN convolutions and attention,
cuBLAS GEMMs, PyTorch's own kernels and one user kernel): library kernels get facts only, never a
register, launch-bounds or block-size change, and the reason is said once for the run."""

from __future__ import annotations

import gzip
import json

from click.testing import CliRunner

from tuneadvise.advisor.advice.evidence_library import library_of
from tuneadvise.cli.main import cli

from ..helpers import ROOT

MODEL = ROOT / "tests" / "fixtures" / "ncu" / "sections" / "ncu_torch_model.csv.gz"
CHANGES = ("register_change", "block_change", "verdict")


def test_library_kernels_of_a_model_get_no_register_advice_and_one_note(tmp_path):
    export = tmp_path / "model.csv"
    export.write_bytes(gzip.decompress(MODEL.read_bytes()))
    result = CliRunner().invoke(cli, ["lint", str(export), "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    document = json.loads(result.output)
    library = [k for k in document["kernels"] if library_of(k["name"])]
    assert len(library) >= 70 and any("xmma" in k["name"] for k in library)
    proposed = [(k["name"], f["code"]) for k in library for f in k["findings"] if set(CHANGES) & set(f["details"])]
    assert proposed == []
    assert not any(f["code"] == "TA008" for k in document["kernels"] for f in k["findings"])  # said once, below
    [note] = [f for f in document["source_findings"] if f["code"] == "TA008"]
    assert sum(note["details"]["libraries"].values()) == len(library)
    # The one kernel the user builds is still advised.
    assert [k["name"] for k in document["kernels"] if not library_of(k["name"])] == ["scale_add"]
