"""`lint`, `diff` and `lint --statistics`: which config applies, the run's options, the baseline
(load, compare, update), the lint document and whether the run passed.

The command hands over what the user typed (the inputs, the options converted) and renders or
serializes what comes back; everything decided about a run is decided here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from ...specs.errors import InputError


@dataclass(frozen=True)
class ConfigChoice:
    """The config a run uses, where it came from ("" for none), and the inputs left once a config
    file named among them is taken out."""

    config: object
    path: str
    inputs: tuple[str, ...]


def choose_config(explicit: str | None, paths) -> ConfigChoice:
    """The config: `explicit` (--config), a config file among `paths`, or the project's
    (tuneadvise.toml, or [tool.tuneadvise] in pyproject.toml); the defaults where there is none."""
    from ..lint.settings import NO_CONFIG, find_project_config, is_config_path

    paths = list(paths)
    named = [p for p in paths if p != "-" and is_config_path(p)]
    if explicit and named or len(named) > 1:
        raise InputError(f"FILES: at most one config file; got {', '.join(([explicit] if explicit else []) + named)}")
    path = explicit or (named[0] if named else None) or find_project_config()
    rest = tuple(p for p in paths if p not in named)
    if path is None:
        return ConfigChoice(NO_CONFIG, "", rest)
    from ..lint.config import load_config  # pydantic: only for a config file

    return ConfigChoice(load_config(path), str(path), rest)


def lint_inputs(choice: ConfigChoice, compile_commands: str | None) -> list[str]:
    """The files named on the command line, else the config's inputs (relative to the config's folder)."""
    if choice.inputs or compile_commands:
        return list(choice.inputs)
    if not choice.config.inputs:
        raise InputError("FILES: nothing to lint; name build output (ptxas logs, cuobjdump listings, "
                         "cubins, .o/.so files) or set inputs in the config")
    base = Path(choice.path).parent if choice.path else Path(".")
    return [str(base / p) for p in choice.config.inputs]


def lint_options(choice: ConfigChoice, archs=(), block_size=None, select=None, ignore=None, fail_on=None,
                 min_occupancy=None, sm_count=None, **settings):
    """The run's LintOptions: what the user gave, else the config's. `archs` as typed (a product
    names its SM count for the grid rules); `settings`: further LintOptions fields as given."""
    from ..lint.run import LintOptions
    from ..lint.settings import normalise_archs, product_sm_counts
    from ..rules import RuleSelection

    config = choice.config
    try:
        names = tuple(dict.fromkeys(normalise_archs(list(archs))))
        products = product_sm_counts(list(archs))
    except ValueError as exc:  # normalise_archs' and product_sm_counts' refusals name the value
        raise InputError("arch", str(exc)) from None
    try:
        selection = RuleSelection.parse(select if select is not None else ",".join(config.select),
                                        ignore if ignore is not None else ",".join(config.ignore))
    except ValueError as exc:  # its message names --select or --ignore
        raise InputError(str(exc)) from None
    return LintOptions(config=config, archs=names, block_size=block_size, selection=selection,
                       fail_on=fail_on or config.fail_on, min_occupancy=min_occupancy, config_path=choice.path,
                       sm_count=sm_count, product_sm_counts=products, **settings)


@dataclass
class LintAnswer:
    """A lint run's outcome: the document (None when the run updated its baseline instead), the
    baseline file's new text (with `update_baseline`), the inputs it could not read and the
    notes on stderr."""

    document: object | None
    baseline: str | None
    kernels: int
    problems: list = field(default_factory=list)
    warnings: list = field(default_factory=list)

    @property
    def bad_input(self) -> bool:
        return bool(self.problems)

    @property
    def passed(self) -> bool:
        """No finding at or above --fail-on (new or worse, with a baseline), no lost occupancy."""
        return self.document is None or self.document.summary["passed"]


def lint_query(inputs, options, build=None, stdin=None, baseline: str | None = None, update_baseline: bool = False,
               tool_version: str = "") -> LintAnswer:
    """Lint `inputs`; against `baseline` where given (its accepted findings and registers), or
    recording today's findings as the baseline's new contents with `update_baseline`."""
    from ..lint import baseline as ratchet
    from ..lint.document import lint_document
    from ..lint.run import lint_paths

    if update_baseline and not baseline:
        raise InputError("update_baseline", "needs --baseline FILE")
    recorded = None
    if baseline and not update_baseline:
        recorded = ratchet.load(baseline)
        options = replace(options, previous_registers=ratchet.recorded_registers(recorded))  # the caller's stay theirs
    report = lint_paths(inputs, options, stdin=stdin, build=build)
    if update_baseline:
        return LintAnswer(None, ratchet.file_text(ratchet.build(report)), len(report.kernels), report.problems,
                          report.warnings)
    comparison = ratchet.compare(report, recorded) if recorded is not None else None
    document = lint_document(report, options.fail_on, comparison, tool_version, options.allow_regressions,
                             selected_only=bool(options.selection.select))
    return LintAnswer(document, None, len(report.kernels), report.problems, report.warnings)


def statistics_query(doc) -> dict:
    """`lint --statistics`: the findings of a lint document counted per code, the most frequent first."""
    from ..rules import registry

    rules = registry()
    counts = sorted(doc.summary["by_code"].items(), key=lambda kv: (-kv[1], kv[0]))
    return {"schema_version": doc.head["schema_version"],
            "statistics": [{"code": code, "count": count, "severity": rules[code].severity, "name": rules[code].name}
                           for code, count in counts],
            "summary": doc.summary}


def diff_query(old: str, new: str, options, stdin=None):
    """`diff`: two builds' kernels side by side (advisor/lint/diff.py's DiffDocument)."""
    from ..lint.diff import diff_paths

    if old == new == "-":
        raise InputError("OLD and NEW: at most one of them may be '-' (standard input is read once)")
    return diff_paths(old, new, options, stdin=stdin)
