"""Continue-as-new with a memo: a run past its history limit goes on in a new run, seamlessly."""

from __future__ import annotations

from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus
from temporalio.worker import Replayer

from interpreter.activities.value_codec import value_converter
from interpreter.program.config import RuntimeConfig
from interpreter.workflows import FFLWorkflow, workflow_runner

from ..replay.history_tasks import task_commands
from ..runtime.harness import FAST_RETRY, run_ffl


def chain_source(length: int) -> str:
    steps = ["        s0 = Inc(x = $.start)"]
    steps += [f"        s{i} = Inc(x = s{i - 1}.y)" for i in range(1, length)]
    return ("namespace chain {\n    event facet Inc(x: Long) => (y: Long)\n"
            "    workflow Run(start: Long) => (y: Long, seen: Json) andThen {\n" + "\n".join(steps) +
            f"\n        f = Inc(x = 0) andThen foreach v in [s3.y, s{length // 2}.y, s{length - 1}.y] {{\n"
            "            g = Inc(x = $.v)\n            yield Run(seen = [g.y])\n        }\n"
            f"        yield Run(y = s{length - 1}.y)\n    }}\n}}\n")


def inc(payload: dict) -> dict:
    return {"y": payload["x"] + 1}


async def runs_of(client, workflow_id: str) -> list:
    return [r async for r in client.list_workflows(f"WorkflowId = '{workflow_id}'")]


async def test_a_long_chain_continues_as_new_and_keeps_results_in_order(temporal_client, tmp_path):
    from interpreter.cli.run_view import fetch_view
    from interpreter.cli.status_view import run_counts

    length = 100
    config = RuntimeConfig(retry=FAST_RETRY, continue_after_events=200)

    async def counted(handle):
        return run_counts(await fetch_view(temporal_client, handle))

    run = await run_ffl(temporal_client, chain_source(length), "chain.Run", {"start": 0}, handlers={"chain.Inc": inc},
                        tmp_path=tmp_path, config=config, timeout=120, inspect=counted)
    assert run.error is None, run.message
    assert run.result == {"y": length, "seen": [5, length // 2 + 2, length + 1]}
    executions = await runs_of(temporal_client, run.handle.id)
    statuses = sorted(e.status for e in executions)
    assert statuses.count(WorkflowExecutionStatus.CONTINUED_AS_NEW) >= 2, statuses
    # the last run's steps query answers the steps it ran, each once (the steps earlier runs completed are
    # restored from its snapshot, unrecorded); ffl status counts every step of the logical run once
    paths = [s["path"] for s in run.steps]
    assert len(paths) == len(set(paths)) and 0 < len(paths) < length
    assert all(s["state"] == "completed" for s in run.steps)
    assert run.inspected["done"] == length + 1 + 3 and run.inspected["failed"] == 0, run.inspected
    # no handler ran twice: every activity id is scheduled in exactly one of the runs
    scheduled: list[str] = []
    for execution in executions:
        history = await temporal_client.get_workflow_handle(run.handle.id, run_id=execution.run_id).fetch_history()
        assert len(history.events) < 400
        scheduled += [e.activity_task_scheduled_event_attributes.activity_id for e in history.events
                      if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
                      and e.activity_task_scheduled_event_attributes.activity_type.name == "chain.Inc"]
    assert len(scheduled) == len(set(scheduled)) == length + 1 + 3


async def test_handlers_served_by_the_interpreter_run_as_local_activities_and_the_chain_continues(
        temporal_client, tmp_path):
    length = 150
    config = RuntimeConfig(retry=FAST_RETRY, continue_after_events=120)
    run = await run_ffl(temporal_client, chain_source(length), "chain.Run", {"start": 0}, handlers={"chain.Inc": inc},
                        tmp_path=tmp_path, config=config, timeout=120, local=True)
    assert run.error is None, run.message
    assert run.result == {"y": length, "seen": [5, length // 2 + 2, length + 1]}
    executions = await runs_of(temporal_client, run.handle.id)
    assert len(executions) >= 2
    markers = scheduled = 0
    for execution in executions:
        history = await temporal_client.get_workflow_handle(run.handle.id, run_id=execution.run_id).fetch_history()
        markers += sum(e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED for e in history.events)
        scheduled += sum(e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
                         and e.activity_task_scheduled_event_attributes.activity_type.name == "chain.Inc"
                         for e in history.events)
    assert scheduled == 0  # no handler went through the server's task queues
    assert markers >= length + 1 + 3  # each local activity's result is a marker (patch markers beside them)


BOTH = ("namespace both {\n    event facet Inc(x: Long) => (y: Long)\n"
        "    workflow Run(items: Json) => (out: Json, last: Long) andThen {\n        s0 = Inc(x = 0)\n"
        + "".join(f"        s{i} = Inc(x = s{i - 1}.y)\n" for i in range(1, 16)) +
        """        all = Inc(x = s15.y) andThen foreach n in $.items {
            g = Inc(x = $.n)
            h = Inc(x = g.y)
            yield Run(out = [h.y])
        }
        e = Inc(x = all.y)
        yield Run(last = e.y)
    }
}
""")


async def test_histories_that_used_children_and_continue_as_new_replay(temporal_client, tmp_path, value_store):
    items = list(range(12))
    config = RuntimeConfig(retry=FAST_RETRY, continue_after_events=100, child_threshold=4, iterations_per_child=4,
                           children_in_flight=2)
    run = await run_ffl(temporal_client, BOTH, "both.Run", {"items": items}, handlers={"both.Inc": inc},
                        tmp_path=tmp_path, config=config, timeout=120)
    assert run.error is None, run.message
    assert run.result == {"out": [n + 2 for n in items], "last": 18}
    histories = []
    for execution in await runs_of(temporal_client, run.handle.id):
        histories.append(await temporal_client.get_workflow_handle(run.handle.id, run_id=execution.run_id)
                         .fetch_history())
    assert len(histories) >= 2  # the parent continued as new while children ran
    child_histories = []
    for history in histories:
        for event in history.events:
            if event.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
                child = event.start_child_workflow_execution_initiated_event_attributes.workflow_id
                child_histories.append(await temporal_client.get_workflow_handle(child).fetch_history())
    assert len(child_histories) == 3
    replayer = Replayer(workflows=[FFLWorkflow], workflow_runner=workflow_runner(sandboxed=True),
                        data_converter=value_converter(value_store))
    for history in histories + child_histories:
        result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
        assert result.replay_failure is None, result.replay_failure


async def test_a_continued_chain_carries_the_places_of_its_completed_steps_not_their_values(
        temporal_client, tmp_path, value_store):
    from interpreter.workflows.memo import Continuation

    length = 60
    config = RuntimeConfig(retry=FAST_RETRY, continue_after_events=100)
    run = await run_ffl(temporal_client, chain_source(length), "chain.Run", {"start": 0}, handlers={"chain.Inc": inc},
                        tmp_path=tmp_path, config=config, timeout=120)
    assert run.error is None, run.message
    converter = value_converter(value_store)
    carried: list[Continuation] = []
    for execution in await runs_of(temporal_client, run.handle.id):
        history = await temporal_client.get_workflow_handle(run.handle.id, run_id=execution.run_id).fetch_history()
        for event in history.events:
            if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
                payloads = list(event.workflow_execution_continued_as_new_event_attributes.input.payloads)
                carried.append((await converter.decode(payloads[1:], [Continuation]))[0])
    assert carried, "the chain continued as new"
    for continuation in carried:
        steps = continuation.snapshot["blocks"]["b0"]
        kept = {int(index) for index in steps["kept"]}
        done = {i for first, last in steps["done"] for i in range(first, last + 1)}
        last = max(kept | done)
        # s0 .. s<last> completed: returns are carried only for the open steps' reads — s<last+1> reads s<last>,
        # f's foreach (f has not run) reads s3 and s30 — the others keep their place alone, and no memo of them
        assert kept == {i for i in (3, length // 2) if i <= last} | {last}, steps
        assert done | kept == set(range(last + 1)) and not done & kept, steps
        assert not any(key.startswith("b0/s") for key in continuation.memo), list(continuation.memo)
        assert continuation.earlier["completed"] == last + 1


async def test_a_run_whose_program_was_slow_to_load_parses_it_and_starts_its_steps_in_tasks_of_their_own(
        temporal_client, tmp_path, monkeypatch):
    from interpreter.activities import interpreter_side
    from interpreter.program.constants import LOAD_PROGRAM_ACTIVITY, TICK_ACTIVITY
    from interpreter.workflows.features import BRIEF_TASKS_PATCH

    length = 12
    outcomes = {}
    for slow in (False, True):
        monkeypatch.setattr(interpreter_side, "SLOW_LOAD_SECONDS", 0.0 if slow else 3600.0)
        run = await run_ffl(temporal_client, chain_source(length), "chain.Run", {"start": 0},
                            handlers={"chain.Inc": inc}, tmp_path=tmp_path / str(slow), timeout=60, local=True)
        assert run.error is None, run.message
        history = await run.handle.fetch_history()
        outcomes[slow] = run.result, task_commands(history)
        result = await Replayer(workflows=[FFLWorkflow], workflow_runner=workflow_runner(sandboxed=True)
                                ).replay_workflow(history, raise_on_replay_failure=False)
        assert result.replay_failure is None, result.replay_failure
    (quick_result, quick), (slow_result, settled) = outcomes[False], outcomes[True]
    assert slow_result == quick_result == {"y": length, "seen": [5, length // 2 + 2, length + 1]}
    step = "local chain.Inc"
    # quick: the first task loads the program and runs the first steps
    assert quick[0][1] == "local " + LOAD_PROGRAM_ACTIVITY and step in quick[0]
    assert not any(command.startswith(TICK_ACTIVITY) for command in quick[0])
    # slow: the first task ends with the load, the second parses it and starts nothing, the third runs steps
    assert settled[0] == [f"patch {BRIEF_TASKS_PATCH}", "local " + LOAD_PROGRAM_ACTIVITY,
                          f"{TICK_ACTIVITY} load-program/settle"]
    assert step not in settled[1] and settled[1][-1] == f"{TICK_ACTIVITY} turn/1"
    assert step in settled[2]
    assert sum(task.count(step) for task in settled) == sum(task.count(step) for task in quick) == length + 4
