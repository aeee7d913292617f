"""``ffl migrate``: running runs move onto a corrected program at their next safe point, checked first.

Twenty runs of one workflow wait in a slow handler; a corrected program is checked against each (its completed
work and its calls in flight) and the compatible ones move — each handler in flight finishes first and is never
called again — while the one whose completed step the correction changes is left untouched, with its report.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field

from temporalio.client import WorkflowExecutionStatus
from temporalio.worker import Worker

from interpreter.activities.dispatch import build_handler_activity, handler_worker_options
from interpreter.activities.interpreter_side import build_interpreter_activities
from interpreter.activities.program_store import LocalProgramStore
from interpreter.operations import migrate, open_runs
from interpreter.program.config import RuntimeConfig
from interpreter.program.constants import MEMO_MIGRATED
from interpreter.workflows import FFLWorkflow, workflow_runner

from .runtime.harness import FAST_RETRY, compile_text, isolated_config, registry_of

BEFORE = """namespace mig {
    event facet Work(i: Long) => (y: Long)
    event facet Slow(i: Long) => (y: Long)
    workflow Run(k: Long) => (out: Json) andThen {
        a = Work(i = $.k)
        s = Slow(i = a.y)
        c = Work(i = s.y)
        z = Slow(i = c.y + 1000000)
        yield Run(out = [a.y, s.y, c.y, z.y])
    }
}
"""

AFTER = BEFORE.replace("c = Work(i = s.y)", "c = Work(i = s.y + 1)").replace(
    "        yield Run(out = [a.y, s.y, c.y, z.y])", "        n = Work(i = 7)\n        yield Run(out = [a.y, s.y, c.y, z.y, n.y])")

FAST = 99
"""The run whose first Slow call returns at once: it has completed ``c``, which the correction changes."""


@dataclass
class Slowly:
    released: asyncio.Event = field(default_factory=asyncio.Event)
    waiting: int = 0
    slow: list[int] = field(default_factory=list)
    work: list[int] = field(default_factory=list)

    def work_fn(self, payload: dict) -> dict:
        self.work.append(payload["i"])
        return {"y": payload["i"] * 2}

    async def slow_fn(self, payload: dict) -> dict:
        self.slow.append(payload["i"])
        if payload["i"] != FAST * 2:
            self.waiting += 1
            await self.released.wait()
        return {"y": payload["i"] + 1}


async def test_migrating_twenty_running_runs_moves_the_compatible_ones_and_leaves_the_incompatible_one(
        temporal_client, tmp_path):
    program, edited = compile_text(BEFORE), compile_text(AFTER)
    queue = "ffl-" + uuid.uuid4().hex[:10]
    store = LocalProgramStore(tmp_path / "registry")
    store.publish(program)
    config = isolated_config(program, queue + "-handlers", RuntimeConfig(retry=FAST_RETRY))
    slowly = Slowly()
    registry = registry_of({"mig.Work": slowly.work_fn, "mig.Slow": slowly.slow_fn})
    workflow_type = "mig.Run"
    interpreter = Worker(temporal_client, task_queue=queue, workflows=[FFLWorkflow], workflow_runner=workflow_runner(),
                         activities=build_interpreter_activities(store, config))
    handler_worker = Worker(temporal_client, task_queue=queue + "-handlers",
                            activities=[build_handler_activity(registry, queue + "-handlers")],
                            **handler_worker_options())
    ks = [*range(19), FAST]
    tag = uuid.uuid4().hex[:8]
    async with interpreter, handler_worker:
        handles = {k: await temporal_client.start_workflow(workflow_type, {"k": k}, id=f"mig-{tag}-{k}",
                                                           task_queue=queue) for k in ks}
        for _ in range(600):  # each run waits in a Slow call: 19 in s, the fast one in z
            if slowly.waiting >= 20:
                break
            await asyncio.sleep(0.05)
        assert slowly.waiting == 20
        for _ in range(100):  # visibility lists a run shortly after it started
            listed = [wid for wid in await open_runs(temporal_client, workflow_type) if wid.startswith(f"mig-{tag}-")]
            if len(listed) == 20:
                break
            await asyncio.sleep(0.1)
        assert sorted(listed) == sorted(h.id for h in handles.values())
        edited_hash = store.publish(edited)  # published once the runs have pinned theirs
        outcomes = {m.workflow_id: m for m in await migrate(temporal_client, listed, edited, edited_hash)}
        refused = outcomes[handles[FAST].id]
        assert not refused.moved and "would not carry over" in refused.reason
        assert refused.report is not None
        assert [(line.path, line.reason) for line in refused.report.conflicts] == [
            ("b0/c", "arguments differ: i: 199 → 200")]
        assert all(outcomes[handles[k].id].moved for k in range(19)), [m.reason for m in outcomes.values()]
        slowly.released.set()
        results = {k: await asyncio.wait_for(handle.result(), 60) for k, handle in handles.items()}
    for k in range(19):  # moved: the corrected c and the new step n ran; a and s kept their results
        a = 2 * k
        s = a + 1
        c = (s + 1) * 2
        assert results[k] == {"out": [a, s, c, c + 1000000 + 1, 14]}
        memo = await (await temporal_client.get_workflow_handle(handles[k].id).describe()).memo()
        assert memo[MEMO_MIGRATED]["to"] == edited_hash
        runs = [r async for r in temporal_client.list_workflows(f"WorkflowId = '{handles[k].id}'")]
        assert sorted(r.status for r in runs) == sorted([WorkflowExecutionStatus.CONTINUED_AS_NEW,
                                                         WorkflowExecutionStatus.COMPLETED])
    a, s = 2 * FAST, 2 * FAST + 1  # left as it was: the old program to its end
    assert results[FAST] == {"out": [a, s, s * 2, s * 2 + 1000000 + 1]}
    # no handler in flight was called twice: each run's two Slow calls once each, a once per run
    assert sorted(slowly.slow) == sorted([2 * k for k in ks] + [v for k in ks for v in [
        ((2 * k + 1 + (k != FAST)) * 2) + 1000000]])
    assert sorted(slowly.work) == sorted(ks + [2 * k + 2 for k in range(19)] + [2 * FAST + 1] + [7] * 19)


CHILDREN_BEFORE = """namespace mig {
    event facet Work(i: Long) => (y: Long)
    event facet Slow(i: Long) => (y: Long)
    workflow Run(items: Json) => (ys: Json, out: Long) andThen {
        all = Work(i = -1) andThen foreach n in $.items {
            w = Work(i = $.n)
            yield Run(ys = [w.y])
        }
        s = Slow(i = all.y)
        yield Run(out = s.y)
    }
}
"""

CHILDREN_AFTER = CHILDREN_BEFORE.replace("        yield Run(out = s.y)", "        e = Work(i = 7000)\n        yield Run(out = e.y)")


async def test_a_run_whose_foreach_ran_in_children_moves_without_calling_their_handlers_again(
        temporal_client, tmp_path):
    program, edited = compile_text(CHILDREN_BEFORE), compile_text(CHILDREN_AFTER)
    queue = "ffl-" + uuid.uuid4().hex[:10]
    store = LocalProgramStore(tmp_path / "registry")
    store.publish(program)
    config = isolated_config(program, queue + "-handlers", RuntimeConfig(
        retry=FAST_RETRY, child_threshold=10, iterations_per_child=10, children_in_flight=2))
    slowly = Slowly()
    registry = registry_of({"mig.Work": slowly.work_fn, "mig.Slow": slowly.slow_fn})
    interpreter = Worker(temporal_client, task_queue=queue, workflows=[FFLWorkflow], workflow_runner=workflow_runner(),
                         activities=build_interpreter_activities(store, config))
    handler_worker = Worker(temporal_client, task_queue=queue + "-handlers",
                            activities=[build_handler_activity(registry, queue + "-handlers")],
                            **handler_worker_options())
    async with interpreter, handler_worker:
        handle = await temporal_client.start_workflow("mig.Run", {"items": list(range(30))},
                                                      id="migc-" + uuid.uuid4().hex[:8], task_queue=queue)
        for _ in range(600):
            if slowly.waiting:
                break
            await asyncio.sleep(0.05)
        assert slowly.waiting == 1
        edited_hash = store.publish(edited)
        (outcome,) = await migrate(temporal_client, [handle.id], edited, edited_hash)
        assert outcome.moved, outcome.reason
        slowly.released.set()
        result = await asyncio.wait_for(handle.result(), 60)
    assert result == {"ys": [n * 2 for n in range(30)], "out": 14000}
    assert sorted(slowly.work) == sorted([-1, *range(30), 7000])  # the children's iterations not called again
    assert slowly.slow == [-2]
