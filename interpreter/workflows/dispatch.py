"""The bottom of a run's effects on Temporal: handlers, scripts and built-in steps as activities and timers.

A handler is the activity named after its event facet, on its queue, with
the options built once when the program loaded (options.py), admitted by the
run's ``Admission``. Where the interpreter worker serves a facet itself
(``ffl run``, or a worker given both the ``ffl`` queue and handlers, which
pins them in ``RuntimeConfig.local_facets``) the step runs as a *local*
activity of that worker: its result is a marker in the run's history and the
next step starts at once, without a server round trip.
``RuntimeConfig.remote_facets`` opts a facet out, and so does a policy of FFL
that sets a heartbeat timeout or a queue (a local activity cannot heartbeat,
complete later or run on another queue). A failed activity becomes the
step's ``StepFailure`` here, phrased once; a cancelled one, the step's
cancellation.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError, CancelledError, FailureError

with workflow.unsafe.imports_passed_through():
    from interpreter.program.config import RuntimeConfig
    from interpreter.program.constants import RUN_SCRIPT_ACTIVITY
    from interpreter.program.display import activity_summary, script_summary, step_text
    from interpreter.program.model import Block, Call, FacetDecl
    from interpreter.program.pinned import CACHE_SIZE
    from interpreter.program.scripts import ScriptRequest
    from interpreter.semantics import BuiltinCall, FacetCall, Iterations, ScriptCall, StepFailure, Write

from .boundaries import activity_failure, timeout_message
from .builtins import Builtins
from .children import Children
from .continuation import Scale
from .pacing import Admission
from .session import Session
from .tracker import Tracker

_KEPT = ("start_to_close_timeout", "schedule_to_close_timeout", "retry_policy", "cancellation_type")
"""Options of a handler's activity that a local activity keeps (queue, heartbeat and schedule-to-start do not apply)."""


_step_texts: OrderedDict[str, dict[str, str]] = OrderedDict()
_step_texts_lock = threading.Lock()  # workflow activations run on several threads


def step_texts(program_hash: str) -> dict[str, str]:
    """Statement id → the step as written (display.step_text), for the program ``program_hash`` names: a worker
    runs one program many times, and each step's text is made once per process. Kept for as many programs as
    pinned.py keeps parsed; not on the Program itself, whose equality is its content's."""
    with _step_texts_lock:
        texts = _step_texts.get(program_hash)
        if texts is None:
            texts = _step_texts[program_hash] = {}
            while len(_step_texts) > CACHE_SIZE:
                _step_texts.popitem(last=False)
        else:
            _step_texts.move_to_end(program_hash)
        return texts


def runs_locally(config: RuntimeConfig, decl: FacetDecl, call: Call | None) -> bool:
    """Whether this call of ``decl`` runs as a local activity: served in-process, and no policy of FFL asks for
    what only a remote activity has (a heartbeat timeout of its own, e.g. 0 for CompleteLater, or a queue)."""
    if not config.runs_locally(decl.qname):
        return False
    policies = [policy for policy in (decl.policy, call.policy if call is not None else None) if policy is not None]
    return not any(policy.heartbeat_seconds is not None or policy.queue for policy in policies)


def local_options(options: workflow.ActivityConfig) -> workflow.LocalActivityConfig:
    """The local-activity options of a handler, from the activity options built once for its facet."""
    local = workflow.LocalActivityConfig()
    for key in _KEPT:
        value = options.get(key)
        if value is not None:
            local[key] = value  # type: ignore[literal-required]
    return local


class Activities:
    """Handlers, scripts and built-ins of one history; foreach blocks past the threshold go to ``children``.

    ``builtins`` is None for runs started before durable control; ``scale`` (runs since SCALE) counts
    local activities towards the history's length.
    """

    def __init__(self, session: Session, tracker: Tracker, admission: Admission, builtins: Builtins | None,
                 scale: Scale | None = None, children: Children | None = None):
        self.session = session
        self.tracker = tracker
        self.admission = admission
        self.builtins = builtins
        self.scale = scale
        self.children = children
        self.summaries = step_texts(session.program_hash)  # statement id → its activity summary's step text

    async def call_facet(self, request: FacetCall) -> Any:
        decl, path, step = request.decl, request.path, request.step
        facet = decl.qname
        options, retry = self.session.options.for_call(facet, step.call)
        self.tracker.task(path, facet, options["task_queue"], request.args)
        try:
            async with self.admission.slot(facet):
                return await self.execute(decl, step.call, request.args, path, self.summary(request), options)
        except ActivityError as err:
            if self.session.rules.cleanup_on_cancel and isinstance(err.cause, CancelledError):
                raise asyncio.CancelledError(f"step '{path}' ({facet}) cancelled with its run") from err
            message, error_type = activity_failure(err)
            message = timeout_message(err, options["task_queue"], retry) or message
            raise StepFailure(path, facet, message, error_type) from err

    def summary(self, request: FacetCall) -> str:
        """The activity's summary in the Web UI: the step as written and its readable path."""
        step = request.step
        text = self.summaries.get(step.id) if step.id else None
        if text is None:
            text = step_text(step)
            if step.id:
                self.summaries[step.id] = text
        return activity_summary(text, request.path, self.session.root, self.tracker.items)

    def execute(self, decl: FacetDecl, call: Call, args: dict[str, Any], path: str, summary: str,
                options: workflow.ActivityConfig):
        facet = decl.qname
        if self.scale is not None and runs_locally(self.session.config, decl, call):
            return self.execute_local(facet, args, path, summary, options)
        return workflow.execute_activity(facet, args, activity_id=path, summary=summary, **options)

    async def execute_local(self, facet: str, args: dict[str, Any], path: str, summary: str,
                            options: workflow.ActivityConfig) -> Any:
        assert self.scale is not None
        await self.scale.local_turn(self.session.options.tick)
        try:
            return await workflow.execute_local_activity(facet, args, activity_id=path, summary=summary,
                                                         **local_options(options))
        except ActivityError:
            raise
        except FailureError as err:  # the SDK raises a local activity's failure unwrapped
            raise ActivityError(f"local activity {facet} failed", scheduled_event_id=0, started_event_id=0,
                                identity="", activity_type=facet, activity_id=path, retry_state=None) from err
        finally:
            self.scale.local_done()

    async def script(self, request: ScriptCall) -> Any:
        """Scripts never run in the workflow: RunScript runs them on the interpreter queue, found by id."""
        path, owner = request.path, request.owner
        try:
            async with self.admission.slot(RUN_SCRIPT_ACTIVITY):
                return await workflow.execute_activity(
                    RUN_SCRIPT_ACTIVITY, ScriptRequest(self.session.program_hash, workflow.info().workflow_type,
                                                       request.script.id, request.params, path),
                    activity_id=path, summary=script_summary(owner, path, self.session.root),
                    **self.session.options.script,
                )
        except ActivityError as err:
            message, error_type = activity_failure(err)
            raise StepFailure(path, owner or "script", message, error_type) from err

    async def builtin(self, request: BuiltinCall) -> dict[str, Any]:
        if self.builtins is None:
            raise StepFailure(request.path, request.facet, "built-in steps need a run started by a release "
                              "that has them", "InterpreterError")
        return await self.builtins.run(request.facet, request.args, request.path)

    def runs_elsewhere(self, block: Block, count: int) -> bool:
        return self.children is not None and self.children.wanted(block, count)

    async def iterations(self, request: Iterations) -> list[list[Write]]:
        assert self.children is not None
        return await self.children.run(request.block, request.scope, request.items)
