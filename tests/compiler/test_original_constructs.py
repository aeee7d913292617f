"""Constructs the original runtime's programs rely on: accepted (with warnings where said) or reported.

Each construct gets a parse or resolution test here; tests/runtime/test_original_constructs_run.py
runs them on the dev server.
"""

from __future__ import annotations

import json
import textwrap

from interpreter.compiler import CompileError, check_sources, compile_result, compile_sources
from interpreter.program.serialize import content_hash, program_to_json


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def pos(text: str, needle: str, nth: int = 1) -> str:
    """``line:col`` (1-based) of the nth occurrence of ``needle`` in the dedented ``text``."""
    text = src(text)
    index = -1
    for _ in range(nth):
        index = text.index(needle, index + 1)
    return f"{text.count(chr(10), 0, index) + 1}:{index - (text.rfind(chr(10), 0, index) + 1) + 1}"


def messages(text: str, severity: str | None = None) -> list[str]:
    return [f"{d.line}:{d.col}: {d.message}" for d in check_sources([("t.ffl", src(text))])
            if severity is None or d.severity == severity]


def without_locations(program) -> object:
    """The compiled program's JSON without source locations (so two spellings can be compared)."""
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "loc"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value
    return strip(json.loads(program_to_json(program)))


# ----------------------------------------------------------------------------- multi-line quoted scripts

MULTILINE_SCRIPT = '''
namespace ops {
    event facet Normalize(service: String, replicas: Long = 2) => (config: Json) script python "
name = params.get('service', '') + \\"-svc\\"
result['config'] = {
    'name': name,
    'replicas': max(1, params.get('replicas', 2)),
}
"
    facet Bump(v: Long) => (r: Long) andThen script "
        result['r'] = params['v'] + 1
    "
    workflow W(s: String) => (c: Json, r: Long) andThen {
        n = Normalize(service = $.s)
        b = Bump(v = 1)
        yield W(c = n.config, r = b.r)
    }
}
'''


def test_quoted_script_may_span_lines_and_keeps_later_positions():
    program = compile_sources([("t.ffl", src(MULTILINE_SCRIPT))])
    code = program.facets["ops.Normalize"].script.code
    assert code.splitlines()[0] == "name = params.get('service', '') + \"-svc\""  # escapes decoded
    assert code.splitlines()[-1] == "}"
    assert program.facets["ops.Bump"].blocks[0].script.code == "result['r'] = params['v'] + 1"  # dedented
    step = program.facets["ops.W"].blocks[0].steps[0]
    assert f"{step.loc.line}:{step.loc.col}" == pos(MULTILINE_SCRIPT, "n = Normalize")  # positions kept


def test_unterminated_multiline_script_names_its_opening_quote():
    text = "namespace a {\n    event facet F() => (r: Long) script python \"\nresult['r'] = 1\n"
    found = check_sources([("t.ffl", text)])
    assert [f"{d.line}:{d.col}: {d.message}" for d in found] == [
        f"{pos(text, chr(34))}: unterminated script string: no '\"' closes this '\"'"]


def test_single_line_strings_still_end_on_their_line():
    found = messages('facet F(x: String = "abc\n")')
    assert found == ["1:21: unterminated string: missing closing '\"' on this line"]


# ----------------------------------------------------------------------------- names across namespaces

ACROSS = """
namespace genomics.Tasks {
    schema Sample { id: String }
    event facet QcReads(sample: Sample) => (ok: Boolean)
}
namespace genomics.Flows {
    %s
    workflow Qc(id: String) => (ok: Boolean) andThen {
        s = Sample(id = $.id)
        q = QcReads(sample = s)
        yield Qc(ok = q.ok)
    }
}
"""


def test_a_name_declared_in_one_other_namespace_resolves_with_a_warning():
    result = compile_result([("t.ffl", src(ACROSS % ""))])
    assert result.errors == []
    assert [f"{w.line}:{w.col}: {w.message}" for w in result.warnings] == [
        "8:13: facet 'Sample' is not visible here; using 'genomics.Tasks.Sample', the only declaration of that "
        "name (add 'use genomics.Tasks' to namespace genomics.Flows)",
        "9:13: facet 'QcReads' is not visible here; using 'genomics.Tasks.QcReads', the only declaration of that "
        "name (add 'use genomics.Tasks' to namespace genomics.Flows)",
    ]
    step = result.program.facets["genomics.Flows.Qc"].blocks[0].steps[1]
    assert (step.call.facet, step.call.kind, step.call.queue) == ("genomics.Tasks.QcReads", "event", "genomics")


def test_the_suggested_use_line_gives_the_same_program_without_warnings():
    warned = compile_result([("t.ffl", src(ACROSS % ""))])
    # `use` is one line longer; put it on the blank line so every location stays the same.
    fixed = compile_result([("t.ffl", src(ACROSS % "use genomics.Tasks"))])
    assert warned.warnings and fixed.diagnostics == []
    assert content_hash(warned.program) == content_hash(fixed.program)


def test_types_resolve_across_namespaces_too():
    text = """
    namespace a { schema Point { x: Long } }
    namespace b { facet F(p: Point) => (x: Long) andThen { yield F(x = $.p.x) } }
    """
    assert messages(text, "error") == []
    assert messages(text, "warning") == [
        "2:26: type 'Point' is not visible here; using 'a.Point', the only declaration of that name "
        "(add 'use a' to namespace b)"]
    program = compile_sources([("t.ffl", src(text))])
    assert program.facets["b.F"].params[0].type.name == "a.Point"


def test_at_top_level_the_hint_is_the_qualified_name():
    text = """
    namespace a { event facet E() => (v: Long) }
    workflow W() => (v: Long) andThen { e = E()  yield W(v = e.v) }
    """
    assert messages(text, "warning") == ["2:41: facet 'E' is not visible here; using 'a.E', the only declaration "
                                         "of that name (write its qualified name 'a.E')"]


def test_two_candidates_stay_an_error_listing_both():
    text = """
    namespace osm.cache.UnitedStates { event facet Alabama() => (v: Long) }
    namespace osm.cache.GraphHopper.UnitedStates { event facet Alabama() => (v: Long) }
    namespace osm.flows { workflow W() andThen { a = Alabama() } }
    """
    assert messages(text) == [
        f"{pos(text, 'Alabama()', 3)}: unknown facet 'Alabama' here: declared in several namespaces, as "
        "'osm.cache.GraphHopper.UnitedStates.Alabama' and 'osm.cache.UnitedStates.Alabama' "
        "(add a 'use' line or write the qualified name)"]


def test_local_and_used_names_need_no_program_wide_search():
    text = """
    namespace a { event facet E() => (v: Long) }
    namespace b { event facet E() => (v: Long) }
    namespace c { use a  workflow W() andThen { e = E() } }
    """
    assert messages(text) == []


def test_only_declarations_of_the_wanted_kind_are_candidates():
    # A facet and a schema share a short name: the type resolves to the schema alone.
    text = """
    namespace a { schema Item { n: Long } }
    namespace b { event facet Item() => (v: Long) }
    namespace c { facet F(i: Item) }
    """
    assert messages(text, "error") == []
    assert compile_sources([("t.ffl", src(text))]).facets["c.F"].params[0].type.name == "a.Item"


# ----------------------------------------------------------------------------- mixins declared nowhere

MIXINS = """
namespace w {
    event facet Fetch(url: String) => (body: String) with RetryPolicy(max_retries = 3)
    workflow W(url: String) => (body: String) andThen {
        f = Fetch(url = $.url) with Timeout(minutes = 120) with Timeout
        yield W(body = f.body)
    }
}
"""


def test_a_mixin_declared_nowhere_warns_and_contributes_nothing():
    result = compile_result([("t.ffl", src(MIXINS))])
    assert result.errors == []
    assert [(f"{w.line}:{w.col}", w.message.split(":")[0]) for w in result.warnings] == [
        (pos(MIXINS, "RetryPolicy"), "mixin 'RetryPolicy' names a facet declared nowhere in the program"),
        (pos(MIXINS, "Timeout("), "mixin 'Timeout' names a facet declared nowhere in the program"),
        (pos(MIXINS, "Timeout\n"), "mixin 'Timeout' names a facet declared nowhere in the program"),
    ]
    assert result.program.facets["w.Fetch"].mixins == []
    assert result.program.facets["w.W"].blocks[0].steps[0].call.mixins == []
    plain = src(MIXINS).replace(" with RetryPolicy(max_retries = 3)", "").replace(
        " with Timeout(minutes = 120) with Timeout", "")
    assert without_locations(result.program) == without_locations(compile_sources([("t.ffl", plain)]))


def test_a_mixin_of_a_wrong_qualified_name_stays_an_error():
    text = """
    namespace w {
        event facet Fetch(url: String) => (body: String)
        workflow W() andThen { f = Fetch(url = "u") with w.Timeout(minutes = 1) }
    }
    """
    assert messages(text) == [f"{pos(text, 'w.Timeout')}: unknown mixin facet 'w.Timeout'"]


def test_a_mixin_declared_in_another_namespace_resolves_with_a_warning():
    text = """
    namespace policy { facet Timeout(minutes: Long = 5) }
    namespace w {
        event facet Fetch(url: String, minutes: Long = 0) => (body: String)
        workflow W() andThen { f = Fetch(url = "u") with Timeout(minutes = 1) }
    }
    """
    result = compile_result([("t.ffl", src(text))])
    assert result.errors == [] and len(result.warnings) == 1
    assert result.program.facets["w.W"].blocks[0].steps[0].call.mixins[0].facet == "policy.Timeout"


# ----------------------------------------------------------------------------- the foreach variable by name

FOREACH = """
namespace mail {
    schema Recipient { email: String, name: String }
    event facet Send(to: String, subject: String) => (id: String)
    workflow Notify(recipients: [Recipient], subject: String) => (ids: [String]) andThen foreach r in $.recipients {
        s = Send(to = %s.email, subject = $.subject ++ " " ++ %s.name) andThen when {
            case %s.name == "x" => { t = Send(to = %s.email, subject = "again") }
            case _ => { }
        }
        yield Notify(ids = [s.id])
    }
}
"""


def test_the_bare_foreach_variable_compiles_like_its_parameter_form():
    bare = compile_sources([("t.ffl", src(FOREACH % ("r", "r", "r", "r")))])
    dollar = compile_sources([("t.ffl", src(FOREACH % ("$.r", "$.r", "$.r", "$.r")))])
    assert without_locations(bare) == without_locations(dollar)
    step = bare.facets["mail.Notify"].blocks[0].steps[0]
    assert step.refs == [] and step.params == ["r", "subject"]


def test_a_step_of_the_variable_name_in_scope_is_an_error_naming_both():
    text = """
    namespace mail {
        event facet Send(to: String) => (id: String)
        workflow W(rs: [Json]) andThen {
            r = Send(to = "x")
            t = Send(to = "y") andThen foreach r in $.rs {
                s = Send(to = r.email)
            }
        }
    }
    """
    assert messages(text) == [
        "6:27: 'r' names both the foreach variable of line 5 and step 'r' (line 4): write '$.r' for the variable "
        "or rename the step"]


def test_a_bare_name_outside_any_foreach_is_still_a_step_reference():
    text = """
    namespace mail {
        event facet Send(to: String) => (id: String)
        workflow W(rs: [Json]) andThen {
            s = Send(to = r.email)
        }
    }
    """
    assert messages(text) == ["4:23: unknown step 'r' (did you mean '$.rs'?)"]


def test_nested_foreach_sees_both_variables_by_name():
    text = """
    namespace n {
        event facet E(a: Json, b: Json) => (v: Long)
        workflow W(groups: [Json]) andThen foreach g in $.groups {
            x = E(a = g, b = 1) andThen foreach m in g.members {
                y = E(a = g.name, b = m)
            }
        }
    }
    """
    assert messages(text) == []
    program = compile_sources([("t.ffl", src(text))])
    outer = program.facets["n.W"].blocks[0]
    inner = outer.steps[0].blocks[0]
    assert inner.items_params == ["g"] and inner.steps[0].params == ["g", "m"]


# ----------------------------------------------------------------------------- checks the original makes

def test_a_when_condition_of_a_known_non_boolean_type_is_an_error():
    text = """
    namespace n {
        event facet E(x: Long) => (y: Long, s: String, ok: Boolean, data: Json)
        workflow W(n: Long, name: String) andThen {
            e = E(x = $.n) andThen when {
                case $.n => { }
                case e.s ++ "!" => { }
                case [1] => { }
                case e.ok => { }
                case e.data => { }
                case e.y > 1 && $.name != "" => { }
                case _ => { }
            }
        } catch when {
            case "yes" => { }
            case _ => { }
        }
    }
    """
    assert messages(text) == [
        f"{pos(text, '$.n =>')}: when case condition must be Boolean, got Long",
        f"{pos(text, '++')}: when case condition must be Boolean, got String",
        f"{pos(text, chr(34) + 'yes')}: when case condition must be Boolean, got String",
    ]


def test_a_prompt_without_template_is_an_error():
    text = """
    namespace n {
        event facet Ask(q: String) => (a: String) prompt { system "answer {q}" model "m" }
        event facet Fine(q: String) => (a: String) prompt { template "answer {q}" }
    }
    """
    assert messages(text) == ["2:47: prompt block of 'n.Ask' needs a 'template'"]


# ----------------------------------------------------------------------------- warnings as a channel

def test_warnings_never_fail_compile_sources_and_strict_makes_them_errors():
    text = src(MIXINS)
    program = compile_sources([("t.ffl", text)])  # no CompileError: only warnings
    result = compile_result([("t.ffl", text)])
    assert content_hash(program) == content_hash(result.program)
    try:
        result.program_or_raise(strict=True)
    except CompileError as err:
        assert [d.severity for d in err.diagnostics] == ["error"] * 3
        assert all("declared nowhere" in d.message for d in err.diagnostics)
    else:
        raise AssertionError("strict accepted warnings")


def test_compile_error_carries_the_warnings_beside_the_errors():
    text = src(MIXINS).replace("yield W(body = f.body)", "yield W(body = f.nope)")
    try:
        compile_sources([("t.ffl", text)])
    except CompileError as err:
        assert [d.line for d in err.diagnostics] == [5]
        assert len(err.warnings) == 3 and all(w.is_warning for w in err.warnings)
        assert str(err.warnings[0]).startswith(f"t.ffl:{pos(MIXINS, 'RetryPolicy')}: warning: mixin 'RetryPolicy'")
    else:
        raise AssertionError("expected a CompileError")


def test_a_foreach_over_a_string_warns_that_the_original_iterated_its_characters():
    text = """
    namespace w {
        event facet E(x: String) => (y: String)
        workflow F(s: String, xs: [String]) => (ys: [String]) andThen foreach c in $.s {
            e = E(x = $.c)
            yield F(ys = [e.y])
        } andThen foreach c in $.xs {
            e = E(x = $.c)
            yield F(ys = [e.y])
        }
    }
    """
    result = compile_result([("t.ffl", src(text))])
    assert result.errors == []
    assert [w.message for w in result.warnings] == [
        "foreach over a String: the original runtime iterated its characters; here the step fails (a foreach "
        "needs a list)"]
    assert (result.warnings[0].line, result.warnings[0].col) == (3, 59)  # the foreach of $.s, not of $.xs
