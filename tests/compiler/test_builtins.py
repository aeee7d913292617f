"""The reserved namespace ffl: built-in steps and policy mixins, validated like any facet and compiled as marked."""

from __future__ import annotations

import textwrap

from interpreter.compiler import check_sources, compile_sources
from interpreter.program.model import Policy
from interpreter.program.serialize import content_hash

SOON = 'seconds = "soon"'


def src(text: str) -> str:
    return textwrap.dedent(text).strip() + "\n"


def at(text: str, needle: str, nth: int = 0) -> str:
    index = -1
    for _ in range(nth + 1):
        index = text.index(needle, index + 1)
    line = text.count("\n", 0, index) + 1
    col = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"{line}:{col}"


def problems(text: str) -> list[str]:
    return [f"{d.line}:{d.col}: {d.message}" for d in check_sources([("m.ffl", text)]) if not d.is_warning]


def compiled(text: str):
    return compile_sources([("m.ffl", text)])


def test_builtin_steps_are_visible_by_qualified_name_without_uses_and_marked_builtin():
    program = compiled(src("""
        namespace app {
            workflow W(n: Long) => (ok: Json) andThen {
                s = ffl.Sleep(seconds = 3600)
                u = ffl.WaitUntil(time = "2030-01-01T00:00:00Z")
                a = ffl.WaitForSignal(name = "approve", timeout_seconds = $.n)
                yield W(ok = a.payload)
            }
        }
    """))
    steps = program.facets["app.W"].blocks[0].steps
    assert [(s.call.kind, s.call.facet, s.call.queue) for s in steps] == [
        ("builtin", "ffl.Sleep", None), ("builtin", "ffl.WaitUntil", None), ("builtin", "ffl.WaitForSignal", None)]
    assert sorted(program.facets) == ["app.W"], "the prelude's declarations stay out of the compiled program"


def test_uses_ffl_makes_the_short_names_visible():
    program = compiled(src("""
        namespace app {
            uses ffl
            workflow W() => (late: Boolean) andThen {
                a = WaitForSignal(name = "go")
                yield W(late = a.timed_out)
            }
        }
    """))
    assert program.facets["app.W"].blocks[0].steps[0].call.facet == "ffl.WaitForSignal"


def test_a_short_builtin_name_without_uses_is_not_resolved_program_wide():
    text = src("""
        namespace app {
            workflow W() andThen { s = Sleep(seconds = 1) }
        }
    """)
    assert problems(text) == [f"{at(text, 'Sleep(')}: unknown facet 'Sleep' (did you mean 'ffl.Sleep'?)"]


def test_a_program_of_its_own_timeout_mixin_keeps_its_meaning():
    """`with Timeout(minutes = 120)` of the original's programs names no built-in: still a warning, no error."""
    text = src("""
        namespace app {
            event facet E(x: Long) => (y: Long)
            workflow W() andThen { s = E(x = 1) with Timeout(minutes = 120) }
        }
    """)
    diagnostics = check_sources([("m.ffl", text)])
    assert [d.severity for d in diagnostics] == ["warning"]
    assert "declared nowhere" in diagnostics[0].message


def test_builtin_arguments_are_checked_by_name_type_and_presence_with_did_you_mean():
    text = src("""
        namespace app {
            workflow W() => (p: Json) andThen {
                s = ffl.Sleep(secs = 5)
                t = ffl.Sleep(seconds = "soon")
                u = ffl.WaitUntil(time = 5)
                a = ffl.WaitForSignal(name = "go")
                yield W(p = a.payloads)
            }
        }
    """)
    assert problems(text) == [
        f"{at(text, 'ffl.Sleep')}: 'ffl.Sleep' needs argument 'seconds'",
        f"{at(text, 'secs')}: unknown argument 'secs': facet 'ffl.Sleep' has no parameter 'secs' "
        "(did you mean 'seconds'?)",
        f"{at(text, SOON)}: argument 'seconds' of 'ffl.Sleep' expects Double, got String",
        f"{at(text, 'time = 5')}: argument 'time' of 'ffl.WaitUntil' expects String, got Long",
        f"{at(text, 'payloads')}: unknown return 'payloads' of step 'a' (facet 'ffl.WaitForSignal' has no such "
        "return) (did you mean 'payload'?)",
    ]


def test_a_misspelt_builtin_suggests_it():
    text = src("""
        namespace app {
            workflow W() andThen { s = ffl.Slep(seconds = 1) }
        }
    """)
    assert problems(text) == [f"{at(text, 'ffl.Slep')}: unknown facet 'ffl.Slep' (did you mean 'ffl.Sleep'?)"]


def test_declaring_the_reserved_namespace_is_an_error():
    text = src("""
        namespace ffl {
            event facet Sleep(seconds: Long)
        }
        namespace ffl.extra {
            facet X()
        }
    """)
    found = problems(text)
    assert found == [
        f"{at(text, 'ffl {')}: namespace 'ffl' is reserved: 'ffl' holds the built-in facets (ffl.Sleep, "
        "ffl.WaitForSignal, ffl.Retry, ...); choose another name",
        f"{at(text, 'ffl.extra')}: namespace 'ffl.extra' is reserved: 'ffl' holds the built-in facets "
        "(ffl.Sleep, ffl.WaitForSignal, ffl.Retry, ...); choose another name",
    ]


def test_policies_on_a_declaration_and_a_call_become_options_not_mixins():
    program = compiled(src("""
        namespace gpu {
            event facet Render(n: Long) => (r: Long)
                with ffl.Retry(max_attempts = 5, initial_seconds = 1, backoff = 2.0, max_seconds = 60,
                               non_retryable = ["ValueError"])
                with ffl.Timeout(start_to_close_seconds = 600, heartbeat_seconds = 30, schedule_to_close_seconds = 3600)
            workflow W() => (r: Long) andThen {
                a = Render(n = 1) with ffl.Queue(name = "big-gpu") with ffl.Timeout(heartbeat_seconds = 0)
                yield W(r = a.r)
            }
        }
    """))
    render = program.facets["gpu.Render"]
    assert render.mixins == []
    assert render.policy == Policy(maximum_attempts=5, initial_interval_seconds=1.0, backoff_coefficient=2.0,
                                   maximum_interval_seconds=60.0, non_retryable_error_types=["ValueError"],
                                   start_to_close_seconds=600.0, heartbeat_seconds=30.0,
                                   schedule_to_close_seconds=3600.0)
    call = program.facets["gpu.W"].blocks[0].steps[0].call
    assert call.mixins == []
    assert call.policy == Policy(queue="big-gpu", heartbeat_seconds=0.0)
    assert call.policy.over(render.policy).retry_updates()["heartbeat_seconds"] is None  # 0: no heartbeat timeout
    assert call.policy.over(render.policy).maximum_attempts == 5


def test_a_policy_argument_is_a_constant_of_the_right_type_and_range():
    text = src("""
        namespace app {
            event facet E(x: Long) => (y: Long)
            workflow W(n: Long) andThen {
                a = E(x = 1) with ffl.Retry(max_attempts = $.n)
                b = E(x = 1) with ffl.Retry(max_attempts = 1.5, backoff = 0.5)
                c = E(x = 1) with ffl.Retry(non_retryable = "ValueError") with ffl.Timeout(heartbeat_seconds = -1)
                d = E(x = 1) with ffl.Retry(max_atempts = 2) with ffl.Queue(name = "")
            }
        }
    """)
    assert problems(text) == [
        f"{at(text, 'max_attempts = $.n')}: argument 'max_attempts' of ffl.Retry must be a constant (a literal or a "
        "list of literals): options are set once, when a run starts",
        f"{at(text, 'max_attempts = 1.5')}: argument 'max_attempts' of ffl.Retry must be a whole number of attempts, "
        "0 or more (0: no limit), got 1.5",
        f"{at(text, 'backoff')}: argument 'backoff' of ffl.Retry must be a number, 1.0 or more (each wait is the "
        "previous one times it), got 0.5",
        f"{at(text, 'non_retryable')}: argument 'non_retryable' of ffl.Retry must be a list of error type names, "
        "e.g. [\"ValueError\"], got 'ValueError'",
        f"{at(text, 'heartbeat_seconds')}: argument 'heartbeat_seconds' of ffl.Timeout must be a number of seconds, "
        "0 or more (0: no heartbeat timeout), got -1",
        f"{at(text, 'max_atempts')}: unknown argument 'max_atempts': mixin 'ffl.Retry' has no parameter "
        "'max_atempts' (did you mean 'max_attempts'?)",
        f"{at(text, 'name = ')}: argument 'name' of ffl.Queue must be a non-empty queue name, got ''",
    ]


def test_policies_apply_to_event_facets_only_and_builtins_stay_in_their_roles():
    text = src("""
        namespace app {
            event facet E(x: Long) => (y: Long)
            facet Composed(x: Long) => (y: Long) with ffl.Retry(max_attempts = 2) andThen {
                e = E(x = $.x)
                yield Composed(y = e.y)
            }
            workflow W() andThen {
                a = Composed(x = 1) with ffl.Timeout(start_to_close_seconds = 5)
                b = ffl.Retry(max_attempts = 1)
                c = E(x = 1) with ffl.Sleep(seconds = 1)
                d = ffl.Sleep(seconds = 1) with ffl.Retry(max_attempts = 2)
                e = E(x = 1) with ffl.Retry(max_attempts = 1) with ffl.Retry(max_attempts = 2)
                f = E(x = 1) with ffl.Retry(max_attempts = 1) as r
            }
        }
    """)
    assert problems(text) == [
        f"{at(text, 'ffl.Retry(max_attempts = 2)')}: 'with ffl.Retry' sets a handler's activity options, so it "
        "applies to event facets and their calls only: 'app.Composed' is a facet without a handler",
        f"{at(text, 'ffl.Timeout')}: 'with ffl.Timeout' sets a handler's activity options, so it applies to event "
        "facets and their calls only: 'app.Composed' is not an event facet",
        f"{at(text, 'ffl.Retry(max_attempts = 1)')}: 'ffl.Retry' is a policy, not a step: write 'with "
        "ffl.Retry(...)' on an event facet's declaration or on a call of one",
        f"{at(text, 'ffl.Sleep(seconds = 1)')}: 'ffl.Sleep' is a built-in step, not a mixin: call it as a step "
        "(w = ffl.Sleep(...))",
        f"{at(text, 'ffl.Retry(max_attempts = 2)', 1)}: built-in step 'ffl.Sleep' takes no mixins",
        f"{at(text, 'ffl.Retry(max_attempts = 2)', 2)}: 'with ffl.Retry' is given twice",
        f"{at(text, 'ffl.Retry(max_attempts = 1) as r')}: 'with ffl.Retry' takes no 'as r': a policy is not passed "
        "to the handler",
    ]


def test_a_program_without_builtins_compiles_as_before():
    """No new field appears in a program that uses none of ffl: its content hash is what it was."""
    text = src("""
        namespace calc {
            event facet Add(x: Long, y: Long) => (sum: Long)
            workflow Double(a: Long) => (total: Long) andThen {
                s = Add(x = $.a, y = $.a)
                yield Double(total = s.sum)
            }
        }
    """)
    program = compiled(text)
    dumped = program.model_dump_json(exclude_none=True)
    assert "policy" not in dumped and "builtin" not in dumped
    assert content_hash(program) == content_hash(compiled(text))
