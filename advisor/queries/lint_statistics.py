"""`lint --statistics`: the findings of a lint document counted per code, the most frequent first."""

from __future__ import annotations


def statistics_query(doc) -> dict:
    """The statistics document of a lint document (advisor.lint.document's)."""
    from ..rules import registry

    rules = registry()
    counts = sorted(doc.summary["by_code"].items(), key=lambda kv: (-kv[1], kv[0]))
    return {"schema_version": doc.head["schema_version"],
            "statistics": [{"code": code, "count": count, "severity": rules[code].severity, "name": rules[code].name}
                           for code, count in counts],
            "summary": doc.summary}
