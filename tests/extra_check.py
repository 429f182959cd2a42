"""A per-tool extra check, imported by name from a policy in tests/test_engine.py."""

from guard.checks import CheckContext
from guard.models import Finding
from guard.taxonomy import Category


def no_mordor(ctx: CheckContext) -> list[Finding]:
    if ctx.args.get("city") == "Mordor":
        return [Finding(category=Category.TOOL_PERMISSION, check="no_mordor", message="one does not simply walk there", path="$.city")]
    return []


#: How sure ``unsure_city`` is that each made-up city was invented (a stand-in for a scored check).
DOUBT = {"Atlantis": 0.95, "Avalon": 0.6, "Eldorado": 0.3}


def unsure_city(ctx: CheckContext) -> list[Finding]:
    city = ctx.args.get("city")
    if city not in DOUBT:
        return []
    return [Finding(category=Category.UNGROUNDED_VALUE, check="unsure_city", message=f"{city!r} may not exist",
                    path="$.city", value=city, confidence=DOUBT[city])]
