"""A run's mailboxes without a server: payloads go to the oldest waiting step, else are kept, and carried."""

from __future__ import annotations

from datetime import UTC, datetime

from interpreter.workflows.mailboxes import RECEIVED_LIMIT, Mailboxes, Waiter

WHEN = datetime(2026, 1, 2, tzinfo=UTC)


def mailboxes() -> Mailboxes:
    return Mailboxes(lambda: WHEN)


async def test_a_payload_goes_to_the_oldest_step_still_waiting_on_its_name():
    boxes = mailboxes()
    gone, first, second = Waiter("gone"), Waiter("first"), Waiter("second")
    gone.done.cancel()  # its wait timed out: it has left
    boxes.box("go").waiting.extend([gone, first, second])
    assert boxes.deliver("go", {"n": 1}, via="update") == "first"
    assert first.done.result() == {"n": 1} and not second.done.done()
    assert boxes.received == [{"index": 0, "name": "go", "via": "update", "time": WHEN.isoformat(),
                               "state": "taken", "step": "first"}]
    assert boxes.waiting_on("go") and not boxes.waiting_on("other")


def test_a_payload_nobody_waits_for_is_kept_and_shown():
    boxes = mailboxes()
    assert boxes.deliver("go", 1) is None
    assert boxes.deliver("go", 2) is None
    shown = boxes.snapshot()
    assert shown["kept"] == {"go": 2} and shown["count"] == 2 and shown["waiting"] == {}
    assert [r["state"] for r in shown["received"]] == ["kept", "kept"]


def test_only_the_newest_arrivals_are_listed_but_all_are_counted():
    boxes = mailboxes()
    for n in range(RECEIVED_LIMIT + 3):
        boxes.deliver("s", n)
    assert len(boxes.received) == RECEIVED_LIMIT and boxes.count == RECEIVED_LIMIT + 3
    assert boxes.received[0]["index"] == 3


def test_a_continued_run_numbers_its_own_arrivals_after_the_carried_ones_and_serves_the_carried_first():
    before = mailboxes()
    before.deliver("go", "old")
    carried = before.carry()
    assert carried["kept"] == {"go": [[0, "old"]]} and carried["count"] == 1
    after = mailboxes()
    after.deliver("go", "new")  # arrived before the continued run had loaded
    after.restore(carried)
    assert list(after.box("go").kept) == [(0, "old"), (1, "new")]
    assert [r["index"] for r in after.received] == [0, 1] and after.count == 2
