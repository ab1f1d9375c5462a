"""The library's answers to each command: one query per command, each taking plain
arguments (a resolved architecture, a LaunchConfig, numbers, paths) and returning one
document. A document is a dict, or a frozen dataclass whose `to_json()` is the dict that
`--format json` prints; the text renderers in `cli/` draw from that same document and
never call the engine themselves.
"""
