"""Verdicts on proposed changes: whether a register cap, a pin, a block size or a budget fix
is likely to pay, from evidence that each small module here gathers (`evidence_*.py`) and
`verdict.combine` weighs. The rules fill a finding's verdict as they fill its message; the
later stages that learn more (the build at the cap, the machine code, a profile) add their
evidence through `rules.with_evidence` (the rules own a finding's words)."""
