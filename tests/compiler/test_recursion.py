"""Unconditional cycles of composed facets are compile errors; recursion something can stop is not. Script ids."""

from __future__ import annotations

import textwrap

from interpreter.compiler import check_sources, compile_sources
from interpreter.program.scripts import scripts_of


def diagnostics(text: str) -> list[str]:
    return [str(d) for d in check_sources([("r.ffl", textwrap.dedent(text))])]


def test_a_facet_calling_itself_is_an_error_at_the_call():
    (problem,) = diagnostics("""
        namespace r {
            facet Loop(n: Long) => (n: Long) andThen {
                s = Loop(n = $.n)
                yield Loop(n = s.n)
            }
        }""")
    assert problem.startswith("r.ffl:4:13: facet 'r.Loop' calls itself unconditionally (step 's')")
    assert "could never end" in problem


def test_a_cycle_through_several_facets_and_a_tail_names_the_cycle():
    (problem,) = diagnostics("""
        namespace r {
            event facet E(n: Long) => (n: Long)
            facet A(n: Long) => (n: Long) andThen { b = B(n = $.n) }
            facet B(n: Long) => (n: Long) andThen { c = C(n = $.n) }
            facet C(n: Long) => (n: Long) andThen {
                e = E(n = $.n) andThen { again = A(n = e.n) }
            }
            workflow W(n: Long) => (n: Long) andThen { a = A(n = $.n) }
        }""")
    assert "facets call each other unconditionally: r.A -> r.B -> r.C -> r.A" in problem
    assert problem.startswith("r.ffl:4:")  # at A's call of B


def test_recursion_that_a_when_foreach_catch_or_own_tail_can_stop_is_accepted():
    assert diagnostics("""
        namespace r {
            event facet E(n: Long) => (n: Long)
            facet Count(n: Long) => (n: Long) andThen when {
                case $.n > 0 => { s = Count(n = $.n - 1) yield Count(n = s.n) }
                case _ => { yield Count(n = 0) }
            }
            facet Tree(kids: [Long]) => (n: Long) andThen foreach k in $.kids { t = Tree(kids = []) }
            facet Safe(n: Long) => (n: Long) andThen { e = E(n = $.n) catch { again = Safe(n = 1) } }
            facet Tailed(n: Long) => (n: Long) andThen { t = Tailed(n = 1) andThen { e = E(n = 2) } }
            workflow W(n: Long) => (n: Long) andThen { c = Count(n = $.n) }
        }""") == []


def test_every_script_has_an_id_unique_in_the_program():
    program = compile_sources([("s.ffl", textwrap.dedent("""
        namespace s {
            facet Pre(a: Long) => (r: Long) script { result["x"] = 1 } andThen { yield Pre(r = $.x) }
            facet Tail(a: Long) => (r: Long) andThen { t = Pre(a = 1) } andThen script { result["r"] = 2 }
            workflow W(a: Long) => (r: Long) andThen {
                s = Tail(a = $.a) andThen script { result["r"] = 3 }
                yield W(r = s.r)
            }
        }"""))])
    scripts = scripts_of(program)
    assert scripts == {"s.Pre/script": 'result["x"] = 1', "s.Tail/b1": 'result["r"] = 2',
                       "s.W/b0/s0/b0": 'result["r"] = 3'}


def test_programs_compiled_before_scripts_had_ids_get_the_same_ids():
    from interpreter.program.pinned import pack_lean, strip_locations, unpack_program
    from interpreter.program.serialize import program_to_json

    program = compile_sources([("s.ffl", 'namespace s { facet F() => (r: Long) andThen script { result["r"] = 1 }\n'
                                          'workflow W() => (r: Long) andThen { f = F() yield W(r = f.r) } }')])
    old = program_to_json(program).replace('"id":"s.F/b0",', "")  # as release 0.1.0 compiled it
    assert '"s.F/b0"' not in old
    pinned = unpack_program(pack_lean(strip_locations(old)[0]))
    assert pinned.facets["s.F"].blocks[0].script.id == "s.F/b0"
