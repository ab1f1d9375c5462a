"""Assertions shared by the CLI tests."""


def assert_one_line_error(result, *fragments: str, exit_code: int = 2) -> None:
    """The bad-input contract (docs/occupancy.md, docs/lint.md): the documented exit code, one
    line of output naming what was wrong (each of `fragments`), and no traceback."""
    assert result.exit_code == exit_code, result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    for fragment in fragments:
        assert fragment in result.output, result.output
