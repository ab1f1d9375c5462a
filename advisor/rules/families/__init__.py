"""The rules, one module per code family: the module's prefix is the family's
(`ta3_occupancy.py` holds TA3xx, which `--select TA3` selects). Every `Rule`
object in these modules is registered (`tuneadvise.advisor.rules.registry`);
add a rule by adding a decorated check to its family's module.
"""
