"""``ffl resume``: a failed run goes on after its handler is fixed, calling only what did not complete.

Each test runs a foreach of 1,000 on the real dev server whose iteration 700 fails on a bad handler, fixes
the handler, resumes the run (interpreter.operations.resume) and reads the handler call log: the failed
iteration and what never ran are called again, none of the 999 others, in one history, across child
workflows and across continue-as-new.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowFailureError
from temporalio.worker import Worker

from interpreter.activities.dispatch import build_handler_activity, handler_worker_options
from interpreter.activities.interpreter_side import build_interpreter_activities
from interpreter.activities.program_store import LocalProgramStore
from interpreter.compatibility import AGAIN, KEPT, NEW
from interpreter.operations import RecoveryError, check, resume
from interpreter.program.config import RuntimeConfig
from interpreter.program.constants import MEMO_RESUME
from interpreter.workflows import FFLWorkflow, workflow_runner

from .paths import REPO
from .runtime.harness import FAST_RETRY, compile_text, isolated_config, registry_of

PIPELINE = """namespace pipe {
    event facet Work(i: Long) => (y: Long)
    event facet Total(ys: Json) => (total: Long)
    workflow Run(items: Json) => (ys: Json, total: Long) andThen {
        all = Work(i = -1) andThen foreach n in $.items {
            w = Work(i = $.n)
            yield Run(ys = [w.y])
        }
        t = Total(ys = [all.y])
        yield Run(total = t.total)
    }
}
"""


@dataclass
class Handlers:
    """Handlers with a call log (a call counts once it returned) and a bug at iteration 700 until fixed."""

    broken: bool = True
    work: list[int] = field(default_factory=list)
    totals: int = 0
    total_broken: bool = False

    def work_fn(self, payload: dict) -> dict:
        if self.broken and payload["i"] == 700:
            raise ValueError("bad handler: cannot work on 700")
        self.work.append(payload["i"])
        return {"y": payload["i"] * 2}

    def twice_fn(self, payload: dict) -> dict:
        self.work.append(payload["i"] * 1000)  # Twice(i) is logged as i * 1000
        return {"y": payload["i"] * 3}

    def total_fn(self, payload: dict) -> dict:
        if self.total_broken:
            raise ValueError("bad handler: cannot total")
        self.totals += 1
        ys = payload.get("ys", payload.get("values"))
        return {"total": sum(y for y in ys if isinstance(y, int))}


@dataclass
class Stack:
    client: Client
    queue: str
    program: Any
    store: LocalProgramStore


@asynccontextmanager
async def served(client: Client, tmp_path: Path, handlers: Handlers, config: RuntimeConfig,
                 source: str = PIPELINE) -> AsyncIterator[Stack]:
    """An interpreter worker and a handler worker for ``source``, up for both the run and its resumption."""
    program = compile_text(source)
    queue = "ffl-" + uuid.uuid4().hex[:10]
    store = LocalProgramStore(tmp_path / "registry")
    store.publish(program)
    config = isolated_config(program, queue + "-handlers", config)
    config.queues.setdefault("pipe.Twice", queue + "-handlers")  # a facet an edited program adds
    registry = registry_of({"pipe.Work": handlers.work_fn, "pipe.Total": handlers.total_fn,
                            "pipe.Twice": handlers.twice_fn})
    interpreter = Worker(client, task_queue=queue, workflows=[FFLWorkflow], workflow_runner=workflow_runner(),
                         activities=build_interpreter_activities(store, config))
    handler_worker = Worker(client, task_queue=queue + "-handlers",
                            activities=[build_handler_activity(registry, queue + "-handlers")],
                            **handler_worker_options())
    async with interpreter, handler_worker:
        yield Stack(client, queue, program, store)


async def failed_then_resumed(client: Client, tmp_path: Path, config: RuntimeConfig, count: int = 1000,
                              again: tuple[str, ...] = ()):
    """Run the pipeline to its failure at 700, fix the handler, resume; the call logs and the two runs."""
    handlers = Handlers()
    items = list(range(count))
    async with served(client, tmp_path, handlers, config) as stack:
        workflow_id = "resume-" + uuid.uuid4().hex[:10]
        first = await client.start_workflow("pipe.Run", {"items": items}, id=workflow_id, task_queue=stack.queue)
        try:
            await asyncio.wait_for(first.result(), 180)
            raise AssertionError("the run should fail at iteration 700")
        except WorkflowFailureError as err:
            assert "cannot work on 700" in str(err.cause) or "cannot work on 700" in str(err.cause.cause)
        before = list(handlers.work)
        handlers.broken = False
        started = await resume(client, workflow_id, again=again)
        assert started.resumed_state == "failed"
        result = await asyncio.wait_for(client.get_workflow_handle(workflow_id).result(), 180)
        after = handlers.work[len(before):]
        return before, after, result, started, handlers


def check_exactly_the_rest_ran_again(before: list[int], after: list[int], count: int = 1000) -> None:
    assert 700 not in before
    assert len(before) == len(set(before))
    assert 700 in after
    assert not set(before) & set(after), sorted(set(before) & set(after))[:10]  # 0 repeats
    assert sorted(before + after) == sorted([-1, *range(count)])  # each work item done exactly once


async def test_a_failed_foreach_resumes_calling_only_the_failed_iteration_and_what_never_ran(
        temporal_client, tmp_path):
    config = RuntimeConfig(retry=FAST_RETRY, child_threshold=5000, max_pending_activities=50)
    before, after, result, started, handlers = await failed_then_resumed(temporal_client, tmp_path, config)
    check_exactly_the_rest_ran_again(before, after)
    assert result == {"ys": [n * 2 for n in range(1000)], "total": -2}
    assert handlers.totals == 1
    described = await temporal_client.get_workflow_handle(started.workflow_id, run_id=started.run_id).describe()
    memo = await described.memo()
    assert memo[MEMO_RESUME] == {"run": started.resumed_run, "from": []}


async def test_a_failed_foreach_in_child_workflows_resumes_recovering_each_childs_completed_iterations(
        temporal_client, tmp_path):
    config = RuntimeConfig(retry=FAST_RETRY, child_threshold=100, iterations_per_child=100, children_in_flight=3)
    before, after, result, _, handlers = await failed_then_resumed(temporal_client, tmp_path, config)
    check_exactly_the_rest_ran_again(before, after)
    assert result == {"ys": [n * 2 for n in range(1000)], "total": -2}
    assert handlers.totals == 1


async def test_a_failed_run_that_continued_as_new_resumes_from_its_last_run(temporal_client, tmp_path):
    config = RuntimeConfig(retry=FAST_RETRY, child_threshold=5000, continue_after_events=600,
                           max_pending_activities=20)
    before, after, result, started, _ = await failed_then_resumed(temporal_client, tmp_path, config)
    check_exactly_the_rest_ran_again(before, after)
    assert result == {"ys": [n * 2 for n in range(1000)], "total": -2}
    runs = [r async for r in temporal_client.list_workflows(f"WorkflowId = '{started.workflow_id}'")]
    assert sum(r.status == WorkflowExecutionStatus.CONTINUED_AS_NEW for r in runs) >= 2


async def test_a_completed_run_is_not_resumed_and_says_so(temporal_client, tmp_path):
    handlers = Handlers(broken=False)
    async with served(temporal_client, tmp_path, handlers, RuntimeConfig(retry=FAST_RETRY)) as stack:
        handle = await temporal_client.start_workflow("pipe.Run", {"items": [1, 2]}, id="done-" + uuid.uuid4().hex[:8],
                                                      task_queue=stack.queue)
        await handle.result()
        try:
            await resume(temporal_client, handle.id)
            raise AssertionError("a completed run must not be resumed")
        except RecoveryError as err:
            assert "completed: there is nothing to resume" in str(err)


async def test_from_a_path_inside_a_child_runs_that_iteration_again_and_nothing_else_that_completed(
        temporal_client, tmp_path):
    config = RuntimeConfig(retry=FAST_RETRY, child_threshold=100, iterations_per_child=100, children_in_flight=3)
    before, after, result, started, _ = await failed_then_resumed(
        temporal_client, tmp_path, config, again=("b0/all/b0/foreach[5]/w",))
    assert 5 in before and after.count(5) == 1
    check_exactly_the_rest_ran_again(before, [i for i in after if i != 5])
    assert result == {"ys": [n * 2 for n in range(1000)], "total": -2}
    memo = await (await temporal_client.get_workflow_handle(started.workflow_id, run_id=started.run_id).describe()).memo()
    assert memo[MEMO_RESUME]["from"] == ["b0/all/b0/foreach[5]/w"]


CHAIN = """namespace pipe {
    event facet Work(i: Long) => (y: Long)
    event facet Total(ys: Json) => (total: Long)
    workflow Run(items: Json) => (total: Long) andThen {
        a = Work(i = 1)
        b = Work(i = 10)
        c = Work(i = a.y)
        d = Total(ys = [b.y, c.y])
        yield Run(total = d.total)
    }
}
"""


async def test_from_a_step_runs_it_and_every_step_reading_it_again_and_a_run_resumes_more_than_once(
        temporal_client, tmp_path):
    handlers = Handlers(broken=False, total_broken=True)
    async with served(temporal_client, tmp_path, handlers, RuntimeConfig(retry=FAST_RETRY), CHAIN) as stack:
        workflow_id = "chain-" + uuid.uuid4().hex[:10]
        first = await temporal_client.start_workflow("pipe.Run", {"items": []}, id=workflow_id, task_queue=stack.queue)
        try:
            await first.result()
            raise AssertionError("Total is broken")
        except WorkflowFailureError:
            pass
        assert sorted(handlers.work) == [1, 2, 10]
        again = await resume(temporal_client, workflow_id)  # still broken: fails again, calling only Total
        try:
            await temporal_client.get_workflow_handle(workflow_id, run_id=again.run_id).result()
            raise AssertionError("Total is still broken")
        except WorkflowFailureError:
            pass
        assert sorted(handlers.work) == [1, 2, 10]
        handlers.total_broken = False
        try:
            await resume(temporal_client, workflow_id, again=["b0/nosuch"])
            raise AssertionError("a path where nothing ran is refused")
        except RecoveryError as err:
            assert "--from b0/nosuch: no step completed at or under this path" in str(err)
        last = await resume(temporal_client, workflow_id, again=["b0/a"])
        assert last.resumed_run == again.run_id
        result = await temporal_client.get_workflow_handle(workflow_id, run_id=last.run_id).result()
        assert result == {"total": 2 * 10 + 2 * 2}
        assert sorted(handlers.work[3:]) == [1, 2]  # a and c (which reads a) again; b kept its result
        assert handlers.totals == 1


EDITED_BEFORE = """namespace pipe {
    event facet Work(i: Long) => (y: Long)
    event facet Total(ys: Json) => (total: Long)
    workflow Run(items: Json) => (total: Long) andThen {
        a = Work(i = 1)
        b = Work(i = 10)
        c = Work(i = a.y)
        f = Work(i = b.y)
        d = Total(ys = [b.y, c.y, f.y])
        yield Run(total = d.total)
    }
}
"""

EDITED_AFTER = """namespace pipe {
    event facet Work(i: Long) => (y: Long)
    event facet Twice(i: Long) => (y: Long)
    event facet Total(values: Json) => (total: Long)
    workflow Run(items: Json) => (total: Long) andThen {
        a = Work(i = 1)
        b = Twice(i = 10)
        c = Work(i = a.y)
        f = Work(i = b.y)
        n = Work(i = 5)
        d = Total(values = [b.y, c.y, f.y, n.y])
        yield Run(total = d.total)
    }
}
"""


async def test_a_resume_with_a_changed_program_reruns_exactly_the_steps_its_report_lists(temporal_client, tmp_path):
    handlers = Handlers(broken=False, total_broken=True)
    async with served(temporal_client, tmp_path, handlers, RuntimeConfig(retry=FAST_RETRY), EDITED_BEFORE) as stack:
        workflow_id = "edit-" + uuid.uuid4().hex[:10]
        first = await temporal_client.start_workflow("pipe.Run", {"items": []}, id=workflow_id, task_queue=stack.queue)
        try:
            await first.result()
            raise AssertionError("Total is broken")
        except WorkflowFailureError:
            pass
        assert sorted(handlers.work) == [1, 2, 10, 20]
        handlers.total_broken = False
        edited = compile_text(EDITED_AFTER)
        program_hash = stack.store.publish(edited)
        report = await check(temporal_client, workflow_id, edited, program_hash=program_hash)
        verdicts = {line.path: (line.verdict, line.reason) for line in report.lines}
        assert verdicts["b0/a"] == (KEPT, "") and verdicts["b0/c"] == (KEPT, "")
        assert verdicts["b0/b"] == (AGAIN, "facet changed: pipe.Work → pipe.Twice")
        assert verdicts["b0/f"][0] == AGAIN and "reads a step that runs again" in verdicts["b0/f"][1]
        assert verdicts["b0/n"] == (NEW, "")
        assert verdicts["b0/d"][0] == AGAIN and verdicts["b0/d"][1].startswith("failed: ")
        text = report.text()
        assert "3 steps run again:\n  b0/b  b = pipe.Twice(i = 10)  — facet changed: pipe.Work → pipe.Twice" in text
        assert "1 step new, runs:\n  b0/n  n = pipe.Work(i = 5)" in text
        started = await resume(temporal_client, workflow_id, program_hash=program_hash)
        result = await temporal_client.get_workflow_handle(workflow_id, run_id=started.run_id).result()
        assert result == {"total": 30 + 4 + 60 + 10}
        called = handlers.work[4:]
        assert sorted(called) == sorted([10 * 1000, 30, 5])  # b (now Twice), f (reads b), n (new); a, c kept
        assert handlers.totals == 1
        assert sorted(report.again) == ["b0/b", "b0/d", "b0/f", "b0/n"]


async def ffl(*args: str) -> tuple[int, str, str]:
    """The ``ffl`` command in a process of its own (this test's workers keep running meanwhile)."""
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "interpreter", *args, cwd=REPO,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    return proc.returncode or 0, out.decode(), err.decode()


async def test_ffl_resume_prints_the_report_dry_run_starts_nothing_and_a_completed_run_is_refused(
        temporal_client, temporal_service, tmp_path):
    handlers = Handlers(broken=False, total_broken=True)
    async with served(temporal_client, tmp_path, handlers, RuntimeConfig(retry=FAST_RETRY), EDITED_BEFORE) as stack:
        workflow_id = "cli-" + uuid.uuid4().hex[:10]
        first = await temporal_client.start_workflow("pipe.Run", {"items": []}, id=workflow_id, task_queue=stack.queue)
        try:
            await first.result()
            raise AssertionError("Total is broken")
        except WorkflowFailureError:
            pass
        edited = tmp_path / "edited.ffl"
        edited.write_text(EDITED_AFTER)
        where = ["--address", temporal_service.address, "--registry", str(stack.store.root)]
        code, out, err = await ffl("resume", workflow_id, "--program", str(edited), "--dry-run", *where)
        assert code == 0, err
        assert "b0/b  b = pipe.Twice(i = 10)  — facet changed: pipe.Work → pipe.Twice" in out
        assert (await temporal_client.get_workflow_handle(workflow_id).describe()).run_id == first.result_run_id
        handlers.total_broken = False
        code, out, err = await ffl("resume", workflow_id, "--program", str(edited), "--wait", *where)
        assert code == 0, err
        assert f"resumed pipe.Run {workflow_id}" in out and out.strip().endswith('{"total": 104}')
        code, out, err = await ffl("status", workflow_id, "--address", temporal_service.address, "--json")
        assert code == 0, err
        lineage = json.loads(out)["lineage"]
        assert lineage["resumed_from"] == first.result_run_id and len(lineage["program"]) == 64
        code, out, err = await ffl("status", workflow_id, "--address", temporal_service.address)
        assert f"resumed from run {first.result_run_id} (ffl resume): same logical run" in out
        code, out, err = await ffl("resume", workflow_id, *where)
        assert code == 1 and "completed: there is nothing to resume" in err and "Traceback" not in err


async def test_a_terminated_run_resumes_recovering_the_iterations_its_cancelled_children_completed(
        temporal_client, tmp_path):
    release = asyncio.Event()
    done: list[int] = []

    cancelled: list[int] = []
    waiting: list[int] = []

    async def work(payload: dict) -> dict:
        if payload["i"] >= 25 and not release.is_set():
            waiting.append(payload["i"])
            try:
                await release.wait()
            except asyncio.CancelledError:
                cancelled.append(payload["i"])
                raise
        done.append(payload["i"])
        return {"y": payload["i"] * 2}

    handlers = Handlers(broken=False)
    handlers.work_fn = work  # type: ignore[method-assign]
    config = RuntimeConfig(retry=FAST_RETRY, child_threshold=10, iterations_per_child=10, children_in_flight=2)
    async with served(temporal_client, tmp_path, handlers, config) as stack:
        workflow_id = "term-" + uuid.uuid4().hex[:10]
        first = await temporal_client.start_workflow("pipe.Run", {"items": list(range(60))}, id=workflow_id,
                                                     task_queue=stack.queue)
        for _ in range(600):  # the chunk of 20-29 has done 20-24 and waits in 25-29
            if {-1, *range(25)} <= set(done):
                break
            await asyncio.sleep(0.05)
        assert {-1, *range(25)} <= set(done)
        await first.terminate(reason="test: stopped mid-way")
        for _ in range(600):  # the children are cancelled with their parent: so are their handlers
            if sorted(cancelled) == sorted(waiting):
                break
            await asyncio.sleep(0.05)
        assert sorted(cancelled) == sorted(waiting) and set(range(25, 30)) <= set(cancelled)
        before = list(done)
        release.set()
        started = await resume(temporal_client, workflow_id)
        assert started.resumed_state == "terminated"
        result = await asyncio.wait_for(temporal_client.get_workflow_handle(workflow_id).result(), 120)
    after = done[len(before):]
    assert result == {"ys": [n * 2 for n in range(60)], "total": -2}
    assert not set(before) & set(after), sorted(set(before) & set(after))
    assert sorted(before + after) == [-1, *range(60)]
