"""The package version: the one place it is written (pyproject.toml reads it from here).

A plain constant rather than importlib.metadata, whose import and lookup every
command that reports its version (lint's JSON does) would pay for. It
lives in the cli package, which every command imports anyway, so reading it
imports nothing more.
"""

__version__ = "0.1.0"
