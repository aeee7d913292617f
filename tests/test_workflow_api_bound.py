"""Issue 17's bound: the modules that use temporalio's workflow API hold at most 2,000 lines together.

What is pure (pacing, records, shape checks, answers built from values)
lives in modules without that import, where it is tested without a server;
what stays is the SDK's side. The count is the one the issue gives:

    grep -rl "from temporalio import workflow" interpreter \\
        | grep -v -e cli/logs.py -e activities/failures.py | xargs wc -l

(those two use the workflow logger's helpers outside workflow code).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOUND = 2_000
OUTSIDE_WORKFLOW_CODE = ("cli/logs.py", "activities/failures.py")


def workflow_api_modules() -> dict[str, int]:
    """Each module importing the workflow API, with its line count (as ``wc -l`` counts: newlines)."""
    found = {}
    for path in sorted((ROOT / "interpreter").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(ROOT).as_posix()
        if "from temporalio import workflow" in text and not name.endswith(OUTSIDE_WORKFLOW_CODE):
            found[name] = text.count("\n")
    return found


def test_the_modules_using_the_workflow_api_hold_at_most_2000_lines():
    modules = workflow_api_modules()
    assert "interpreter/workflows/ffl_workflow.py" in modules  # the count finds what it counts
    total = sum(modules.values())
    largest = sorted(modules.items(), key=lambda item: -item[1])[:5]
    assert total <= BOUND, f"{total} lines use the workflow API (bound {BOUND}); largest: {largest}"


def test_the_pure_modules_stay_without_the_workflow_api():
    for name in ("pacing.py", "records.py", "mailboxes.py", "remembered.py", "trust_checks.py", "resumed.py",
                 "outcomes.py"):
        text = (ROOT / "interpreter" / "workflows" / name).read_text(encoding="utf-8")
        assert "from temporalio import workflow" not in text and "temporalio.workflow" not in text, name
