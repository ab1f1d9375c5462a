"""`frontier`: ptxas's figures at every register cap where a kernel's occupancy changes, for the
kernels of one source that a glob picks."""

from __future__ import annotations

import math

from ...specs.errors import InputError


def frontier_query(source: str, archs, block_dims: tuple[int, ...], kernel_glob: str | None = None, settings=None):
    """The FrontierReport of `source` on `archs` (names as typed: sm_90, hopper, 9.0) at a block of
    `block_dims`; a source with no kernel (to report) is bad input, unless the compiler rejected
    a build (its problems say why)."""
    from ..frontier import frontier
    from ..lint.settings import normalise_archs

    try:
        names = tuple(dict.fromkeys(normalise_archs(list(archs))))
    except ValueError as exc:  # normalise_archs names the value it refuses
        raise InputError("arch", str(exc)) from None
    report = frontier(source, names, math.prod(block_dims), kernel_glob, settings)
    if not report.kernels and not report.problems:
        raise InputError(f"--kernel: '{kernel_glob}' matches no kernel of {source}" if kernel_glob is not None
                         else f"FILE: {source} holds no kernel")  # an empty glob is given, and matches nothing
    return report
