"""Activity options, built once: per event facet when the program loads, and for the interpreter's own.

Every ``workflow.execute_activity`` of the interpreter takes its timeouts,
retry policy and task queue from here (``**options``), so the handler,
script, program-loading, mirror and tick activities never carry hand-written
copies that drift apart. A facet's options combine the compiled program
(its namespace's queue) with the run's pinned RuntimeConfig (queue
overrides, retry and timeout per facet).
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.workflow import ActivityCancellationType

with workflow.unsafe.imports_passed_through():
    from interpreter.program.config import RetryConfig, RuntimeConfig
    from interpreter.program.model import Call, Policy, Program
    from interpreter.semantics.interpreter import dispatched

from .boundaries import heartbeat, schedule_to_start


def retry_policy(retry: RetryConfig) -> RetryPolicy:
    return RetryPolicy(
        maximum_attempts=retry.maximum_attempts,
        initial_interval=timedelta(seconds=retry.initial_interval_seconds),
        backoff_coefficient=retry.backoff_coefficient,
        maximum_interval=timedelta(seconds=retry.maximum_interval_seconds),
        non_retryable_error_types=list(retry.non_retryable_error_types) or None,
    )


def _with_retry(task_queue: str, retry: RetryConfig) -> workflow.ActivityConfig:
    return workflow.ActivityConfig(task_queue=task_queue,
                                   start_to_close_timeout=timedelta(seconds=retry.start_to_close_seconds),
                                   retry_policy=retry_policy(retry))


def handler_options(task_queue: str, retry: RetryConfig) -> workflow.ActivityConfig:
    """A handler's options: its retry and timeouts, and the optional schedule-to-start and heartbeat timeouts."""
    options = _with_retry(task_queue, retry)
    options["schedule_to_start_timeout"] = schedule_to_start(retry)  # boundary: None unless configured
    options["heartbeat_timeout"] = heartbeat(retry)
    return options


def load_program_options(interpreter_queue: str) -> workflow.ActivityConfig:
    """LoadProgram runs before the config is known: its options are fixed."""
    return workflow.ActivityConfig(
        task_queue=interpreter_queue, start_to_close_timeout=timedelta(seconds=60),
        retry_policy=RetryPolicy(maximum_attempts=5, non_retryable_error_types=["ProgramNotFound", "ProgramTampered"]),
    )


def load_program_local_options() -> workflow.LocalActivityConfig:
    """LoadProgram as a local activity (since Level.LOCAL_LOAD): the same timeout and retries."""
    remote = load_program_options("")
    return workflow.LocalActivityConfig(start_to_close_timeout=remote["start_to_close_timeout"],
                                        retry_policy=remote["retry_policy"])


def tick_options(interpreter_queue: str) -> workflow.ActivityConfig:
    """An ``ffl.Tick`` only brings the run its next workflow task (see admission): one quick attempt."""
    return workflow.ActivityConfig(task_queue=interpreter_queue, start_to_close_timeout=timedelta(seconds=10),
                                   retry_policy=RetryPolicy(maximum_attempts=1))


def policy_options(config: RuntimeConfig, qname: str, default_queue: str,
                   policy: Policy | None) -> tuple[workflow.ActivityConfig, RetryConfig]:
    """A handler's options under a policy of FFL (``ffl.Retry``/``Timeout``/``Queue``) over the worker's config.

    A step waits for its handler to acknowledge a cancellation, so cleanup never races a handler still running.
    """
    retry = config.retry_for(qname)
    if policy is not None:
        retry = retry.model_copy(update=policy.retry_updates())
    queue = policy.queue if policy is not None and policy.queue else config.queue_for(qname, default_queue)
    options = handler_options(queue, retry)
    if retry.schedule_to_close_seconds:
        options["schedule_to_close_timeout"] = timedelta(seconds=retry.schedule_to_close_seconds)
    options["cancellation_type"] = ActivityCancellationType.WAIT_CANCELLATION_COMPLETED
    return options, retry


class ActivityOptions:
    """The options of every activity a run starts, built when its program and config are loaded.

    With ``control`` (runs started since durable control, features.Level.CONTROL) a
    facet's policy and a call's are applied, the latter built once per call;
    without it, the options of the release before.
    """

    def __init__(self, program: Program, config: RuntimeConfig, interpreter_queue: str, control: bool = False):
        self.control = control
        self.config = config
        self.decls = {qname: decl for qname, decl in program.facets.items() if dispatched(decl)}
        self.retries: dict[str, RetryConfig] = {}
        self.facets: dict[str, workflow.ActivityConfig] = {}
        for qname, decl in self.decls.items():
            if control:
                self.facets[qname], self.retries[qname] = policy_options(config, qname, decl.queue, decl.policy)
            else:
                self.retries[qname] = config.retry_for(qname)
                self.facets[qname] = handler_options(config.queue_for(qname, decl.queue), self.retries[qname])
        self.calls: dict[int, tuple[workflow.ActivityConfig, RetryConfig]] = {}  # by id(call): its own policy
        self.script = _with_retry(interpreter_queue, config.retry)
        self.mirror = workflow.ActivityConfig(
            task_queue=interpreter_queue, start_to_close_timeout=timedelta(seconds=30),
            retry_policy=RetryPolicy(maximum_attempts=5, maximum_interval=timedelta(seconds=10)),
        )
        self.tick = tick_options(interpreter_queue)

    def for_call(self, qname: str, call: Call | None) -> tuple[workflow.ActivityConfig, RetryConfig]:
        """The options of one call of ``qname`` and the retry settings they hold (for its error messages)."""
        if not self.control or call is None or call.policy is None:
            return self.facets[qname], self.retries[qname]
        found = self.calls.get(id(call))
        if found is None:
            decl = self.decls[qname]
            found = self.calls[id(call)] = policy_options(self.config, qname, decl.queue,
                                                          call.policy.over(decl.policy))
        return found
