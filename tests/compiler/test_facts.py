"""What the compiler decides for the interpreter: accepted and required names, declared returns, catches."""

from __future__ import annotations

import json

from interpreter.compiler import check_sources, compile_sources
from interpreter.program.pinned import pack_lean, strip_locations, unpack_program
from interpreter.program.serialize import canonical_json, program_to_json

SOURCE = """namespace m {
    facet Retry(attempts: Long = 3) => (tries: Long)
    facet Owner(owner: String) => (auditedBy: String)
    implicit who = Owner(owner = "ops")
    event facet Ship(parcel: String, weight: Long) => (echo: Json) with Owner() with Retry() as retry
    facet Guarded(x: Long) => (y: Long) andThen { yield Guarded(y = $.x) } catch { yield Guarded(y = 0) }
    workflow W(parcel: String, weight: Long = 1, owner: String) => (out: Json) andThen {
        a = Ship(parcel = $.parcel, weight = $.weight)
        g = Guarded(x = 1)
        c = Ship(parcel = "c", weight = 2) catch { yield W(out = c.error) }
        p = Ship(parcel = "p", weight = 3) andThen { inner = Guarded(x = 2) }
        yield W(out = a.echo)
    }
}
"""


def compiled():
    return compile_sources([("m.ffl", SOURCE)])


def test_accepts_lists_parameters_then_each_mixins_alias_or_parameters():
    ship = compiled().facets["m.Ship"]
    assert ship.accepts == ["parcel", "weight", "owner", "retry"]  # merged Owner's parameter, aliased Retry's record


def test_required_leaves_out_defaults_and_parameters_an_implicit_gives():
    program = compiled()
    assert program.facets["m.W"].required == ["parcel", "owner"]
    assert program.facets["m.Owner"].required == []  # implicit who gives owner
    assert program.facets["m.Ship"].required == ["parcel", "weight"]


def test_return_names_add_the_signature_mixins_returns():
    assert compiled().facets["m.Ship"].return_names == ["echo", "auditedBy", "tries"]


def test_a_step_catches_when_it_or_its_facet_has_a_catch_nested_steps_included():
    blocks = compiled().facets["m.W"].blocks
    steps = {s.name: s for s in blocks[0].steps}
    assert {name: s.catches for name, s in steps.items()} == {"a": False, "g": True, "c": True, "p": False}
    assert steps["p"].blocks[0].steps[0].catches  # the tail's Guarded step


def test_calls_are_checked_with_the_interpreters_rule_for_aliased_signature_mixins():
    base = SOURCE.replace("        yield W(out = a.echo)\n", "        {extra}\n        yield W(out = a.echo)\n")
    alias = base.replace("{extra}", 'x = Ship(parcel = "x", weight = 1, retry = #{"attempts": 1})')
    assert check_sources([("m.ffl", alias)]) == []
    param = base.replace("{extra}", 'x = Ship(parcel = "x", weight = 1, attempts = 1)')
    problems = check_sources([("m.ffl", param)])
    assert len(problems) == 1 and "unknown argument 'attempts'" in problems[0].message


def _without(node, keys):
    if isinstance(node, dict):
        return {k: _without(v, keys) for k, v in node.items() if k not in keys}
    if isinstance(node, list):
        return [_without(v, keys) for v in node]
    return node


def test_a_program_compiled_before_the_facts_existed_gets_them_when_pinned_and_read():
    program = compiled()
    text = canonical_json(_without(json.loads(program_to_json(program)), {"accepts", "required", "return_names",
                                                                           "catches"}))  # as a store holds it
    assert '"catches"' not in text and '"accepts"' not in text
    read = unpack_program(pack_lean(strip_locations(text)[0]))
    assert read.facets["m.Ship"].accepts == ["parcel", "weight", "owner", "retry"]
    assert read.facets["m.W"].blocks[0].steps[1].catches is True
    assert program_to_json(read) == strip_locations(program_to_json(program))[0]
