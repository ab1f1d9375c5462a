"""The one architecture resolver: what every caller (the commands, the library, lint, batch,
frontier) turns an architecture name into. A name (family, sm_XX, X.Y, product), a user's spec
file, a cuda_occupancy.h release, and `native` (the local GPU) through a hook that probes/
provides, so that only probes/ touches CuPy or the driver.

Every failure is an InputError naming the argument: UnknownArchError (`arch`), SpecFileError
(`spec_file`), UnknownReleaseError (`cuda`)."""

from __future__ import annotations

from collections.abc import Callable

from .errors import InputError
from .records import Arch, Resolved

MISSING_ARCH = "missing; give a family (volta), sm_XX, X.Y or a product (h100-sxm)"


def resolve(arch, spec_file=None, cuda: str | None = None,
            native: Callable[[], Resolved] | None = None) -> Resolved:
    """`arch` (a name, an Arch, or None where `spec_file` adds exactly one architecture) ->
    Resolved, as the `cuda` release of the header computes it (None: the default release).
    `native`: called for the name 'native' (probes.native.native_resolved); without it,
    'native' is refused as not taken here (names.NativeNotTaken, an UnknownArchError)."""
    resolved = _resolved(arch, spec_file, native)
    if cuda is None:
        return resolved
    from .releases import resolved_under

    return resolved_under(resolved, cuda)


def resolve_arch(arch, cuda: str | None = None) -> Arch:
    """resolve(arch, cuda=cuda).arch: the Arch alone, for callers that need no product or note."""
    return resolve(arch, cuda=cuda).arch


def _resolved(arch, spec_file, native) -> Resolved:
    if isinstance(arch, Arch):
        return Resolved(arch)
    from .catalog import resolve_shipped

    if spec_file:
        from .models import load_user_spec  # pydantic: only on this path

        catalog, added = load_user_spec(spec_file)
        if arch is None and len(added) == 1:
            arch = added[0].cc
        if arch is None:
            raise InputError("arch", MISSING_ARCH)
        return catalog.resolve(arch)
    if isinstance(arch, str) and arch.strip().lower() == "native":
        if native is None:  # a caller that measures nothing (lint's targets, frontier, a batch line)
            from .names import NativeNotTaken

            raise NativeNotTaken(arch)
        return native()
    if arch is None:
        raise InputError("arch", MISSING_ARCH)
    return resolve_shipped(arch)
