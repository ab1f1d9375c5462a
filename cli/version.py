"""The package version: the one place it is written (pyproject.toml reads it from here).

A plain constant rather than importlib.metadata, whose import and lookup cost
some 30 ms of every command that reports its version (lint's JSON does). It
lives in the cli package, which every command imports anyway, so reading it
imports nothing more.
"""

__version__ = "0.1.0"
