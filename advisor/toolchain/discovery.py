"""Find NVIDIA's compiler: the `[nvcc]` extra's wheels first (nvidia-cuda-nvcc and
friends install nvcc and ptxas under site-packages' `nvidia/cu13/bin`), then
CUDA_HOME / CUDA_PATH, then PATH.

    >>> from tuneadvise.advisor.toolchain.discovery import ToolchainMissing
    >>> str(ToolchainMissing()).startswith("no CUDA compiler found")
    True
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

# Where the PyPI wheels put the binaries, under each `nvidia` namespace directory:
# CUDA 13's nvidia-cuda-nvcc, and CUDA 12's nvidia-cuda-nvcc-cu12.
_WHEEL_BINS = ("cu13/bin", "cuda_nvcc/bin")
HOME_VARIABLES = ("CUDA_HOME", "CUDA_PATH")
INSTALL_HINT = ("no CUDA compiler found: install it with pip install 'tuneadvise[nvcc]' "
                "(NVIDIA's nvcc and ptxas from PyPI), or set CUDA_HOME to a CUDA toolkit")


class ToolchainMissing(RuntimeError):
    """No nvcc/ptxas: the one sentence on how to get them."""

    def __init__(self, detail: str = ""):
        super().__init__(INSTALL_HINT + (f" ({detail})" if detail else ""))


@dataclass(frozen=True)
class Toolchain:
    nvcc: str  # absolute paths
    ptxas: str
    origin: str  # "the [nvcc] extra", "CUDA_HOME", "PATH"

    @property
    def version(self) -> str:
        return release_line(self.ptxas)

    @property
    def root(self) -> str:
        """The toolkit's folder (bin/ and include/ under it): its headers are not the user's."""
        return str(Path(self.nvcc).parent.parent)


@lru_cache(maxsize=8)
def release_line(tool: str) -> str:
    """A CUDA tool's own version line, as `tool --version` prints it ('Cuda compilation tools,
    release 13.5, V13.5.37'); "unknown" where it prints none."""
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    lines = [line for line in out.splitlines() if "release" in line]
    return lines[-1].strip() if lines else "unknown"


_RELEASE = re.compile(r"release (\d{1,3})\.(\d{1,3})")


def tool_release(tool: str) -> tuple[int, int]:
    """A CUDA tool's release from its version line ('... release 13.5, ...' -> (13, 5)); (0, 0) unknown."""
    match = _RELEASE.search(release_line(tool))
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def wheel_bins():
    try:
        import nvidia  # a namespace package: every installed nvidia-* wheel's directory
    except ImportError:
        return
    for root in getattr(nvidia, "__path__", ()):
        for sub in _WHEEL_BINS:
            yield Path(root) / sub


def _pair(directory: Path) -> tuple[str, str] | None:
    nvcc, ptxas = directory / "nvcc", directory / "ptxas"
    if os.access(nvcc, os.X_OK) and os.access(ptxas, os.X_OK):
        return str(nvcc.resolve()), str(ptxas.resolve())
    return None


def candidates(program: str = "nvcc", extra: str = "nvcc"):
    """(directory, origin) where NVIDIA's `program` may be, in the order they are tried: the
    wheels of the `extra`, CUDA_HOME/CUDA_PATH, then PATH."""
    for directory in wheel_bins():
        yield directory, f"the [{extra}] extra"
    for variable in HOME_VARIABLES:
        home = os.environ.get(variable)
        if home:
            yield Path(home) / "bin", variable
    found = shutil.which(program)
    if found:
        yield Path(found).resolve().parent, "PATH"


def find_toolchain() -> Toolchain:
    """The first nvcc with a ptxas beside it, or ToolchainMissing."""
    for directory, origin in candidates():
        pair = _pair(directory)
        if pair is not None:
            return Toolchain(pair[0], pair[1], origin)
    raise ToolchainMissing()
