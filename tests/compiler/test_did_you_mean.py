"""'Did you mean' suffixes: one test per kind of unknown name, and the names never offered."""

from __future__ import annotations

import textwrap

from interpreter.compiler import check_sources
from interpreter.compiler.suggest import close_names, did_you_mean


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def at(text: str, needle: str) -> str:
    """``line:col`` of the first ``needle`` in ``text``."""
    index = text.index(needle)
    return f"{text.count(chr(10), 0, index) + 1}:{index - (text.rfind(chr(10), 0, index) + 1) + 1}"


def problems(text: str, *more: tuple[str, str]) -> list[str]:
    """Every diagnostic of ``t.ffl`` (plus ``more`` files) as ``line:col: [warning: ]message``."""
    found = check_sources([("t.ffl", src(text)), *more])
    return [str(d).removeprefix("t.ffl:") for d in found if d.file == "t.ffl"]


CALC = """
namespace calc {
    event facet Add(x: Long, y: Long) => (sum: Long)
    schema Point { xpos: Long, ypos: Long }
    workflow W(count: Long, label: String = "") => (total: Long) andThen {
%s
    }
}
"""


def body(lines: str) -> str:
    return src(CALC) % textwrap.indent(src(lines), " " * 8)


# ----------------------------------------------------------------------------- one per kind of name


def test_a_misspelt_step_suggests_the_visible_step():
    text = body("total = Add(x = $.count, y = 1)\nyield W(total = totl.sum)")
    assert problems(text) == [f"{at(text, 'totl')}: unknown step 'totl' (did you mean 'total'?)"]


def test_a_misspelt_parameter_suggests_the_parameter_with_its_dollar():
    text = body("s = Add(x = $.cont, y = 1)")
    assert problems(text) == [f"{at(text, '$.cont')}: unknown parameter '$.cont' (did you mean '$.count'?)"]


def test_a_bare_name_close_to_a_parameter_suggests_the_parameter():
    text = body("s = Add(x = cont, y = 1)")
    assert problems(text) == [f"{at(text, 'cont,')}: unknown step 'cont' (did you mean '$.count'?)"]


def test_a_misspelt_foreach_variable_suggests_it_by_its_bare_name():
    text = src("""
        namespace n {
            event facet E(x: Long) => (y: Long)
            workflow W(items: [Long]) andThen foreach item in $.items {
                e = E(x = itme)
                f = E(x = $.iten)
            }
        }
    """)
    assert problems(text) == [
        f"{at(text, 'itme')}: unknown step 'itme' (did you mean 'item' or '$.items'?)",
        f"{at(text, '$.iten')}: unknown parameter '$.iten' (did you mean '$.item' or '$.items'?)",
    ]


def test_a_misspelt_facet_suggests_the_facet():
    text = body("s = Ad(x = 1, y = 2)")
    assert problems(text) == [f"{at(text, 'Ad(')}: unknown facet 'Ad' (did you mean 'Add'?)"]


def test_a_misspelt_qualified_facet_suggests_the_qualified_name():
    text = body("s = calc.Ad(x = 1, y = 2)")
    assert problems(text) == [f"{at(text, 'calc.Ad(')}: unknown facet 'calc.Ad' (did you mean 'calc.Add'?)"]


def test_a_misspelt_schema_suggests_the_schema():
    text = body("p = Pont(xpos = 1, ypos = 2)")
    assert problems(text) == [f"{at(text, 'Pont')}: unknown facet 'Pont' (did you mean 'Point'?)"]


def test_a_misspelt_schema_field_suggests_the_field_in_an_instantiation_and_a_read():
    text = body("p = Point(xpos = 1, ypso = 2)\ns = Add(x = p.xps, y = 1)")
    assert problems(text) == [
        f"{at(text, 'ypso')}: unknown field 'ypso' of schema 'calc.Point' (did you mean 'ypos'?)",
        f"{at(text, 'xps')}: unknown return 'xps' of step 'p' (facet 'calc.Point' has no such return) "
        "(did you mean 'xpos'?)",
    ]


def test_a_misspelt_field_of_a_schema_value_suggests_the_field():
    text = src("""
        namespace n {
            event facet E(x: Long) => (y: Long)
            schema Point { xpos: Long, ypos: Long }
            workflow W(p: Point) andThen { e = E(x = $.p.ypo) }
        }
    """)
    assert problems(text) == [f"{at(text, 'ypo)')}: unknown field 'ypo' of schema 'n.Point' (did you mean 'ypos'?)"]


def test_a_misspelt_return_suggests_the_steps_return():
    text = body("s = Add(x = 1, y = 2)\nyield W(total = s.summ)")
    assert problems(text) == [f"{at(text, 'summ')}: unknown return 'summ' of step 's' (facet 'calc.Add' has no "
                              "such return) (did you mean 'sum'?)"]


def test_a_misspelt_return_in_a_yield_suggests_the_declared_return():
    text = body("yield W(totl = 1)")
    assert problems(text) == [f"{at(text, 'totl')}: unknown return 'totl' in yield: 'calc.W' has no return 'totl' "
                              "(did you mean 'total'?)"]


def test_a_misspelt_namespace_in_uses_suggests_the_namespace():
    text = src("""
        namespace calc.math { facet F() }
        namespace app {
            uses calc.mth
        }
    """)
    assert problems(text) == [f"{at(text, 'calc.mth')}: uses unknown namespace 'calc.mth' (did you mean 'calc.math'?)"]


def test_a_misspelt_argument_suggests_a_declared_parameter_not_yet_passed():
    text = body("s = Add(x = 1, yy = 2, xx = 3)")
    assert problems(text) == [
        f"{at(text, 'yy')}: unknown argument 'yy': facet 'calc.Add' has no parameter 'yy' (did you mean 'y'?)",
        f"{at(text, 'xx')}: unknown argument 'xx': facet 'calc.Add' has no parameter 'xx'",  # 'x' is passed already
    ]


def test_a_misspelt_argument_of_a_mixin_and_of_an_implicit_suggest_their_parameters():
    text = src("""
        namespace n {
            facet Tag(label: String)
            event facet E(x: Long) => (y: Long)
            implicit e = E(xx = 1)
            workflow W() andThen { s = E(x = 1) with Tag(lable = "a") }
        }
    """)
    assert problems(text) == [
        f"{at(text, 'xx')}: implicit 'e' passes unknown argument 'xx': facet 'n.E' does not declare it "
        "(did you mean 'x'?)",
        f"{at(text, 'lable')}: unknown argument 'lable': mixin 'n.Tag' has no parameter 'lable' (did you mean 'label'?)",
    ]


def test_a_misspelt_type_suggests_schemas_and_built_in_types():
    text = src("""
        namespace n {
            schema Address { street: String }
            facet F(a: Adress, b: Strng, c: [long])
        }
    """)
    assert problems(text) == [
        f"{at(text, 'Adress')}: unknown type 'Adress' (did you mean 'Address'?)",
        f"{at(text, 'Strng')}: unknown type 'Strng' (did you mean 'String'?)",
        f"{at(text, 'long')}: unknown type 'long' (did you mean 'Long'?)",
    ]


def test_a_misspelt_yield_target_suggests_the_allowed_target():
    text = body("yield Ww(total = 1)")
    assert problems(text) == [f"{at(text, 'yield')}: unknown yield target 'Ww' (did you mean 'W'?)"]


def test_a_yield_in_a_steps_tail_is_offered_the_steps_facet():
    text = body("s = Add(x = 1, y = 2) andThen {\n    yield Ad(sum = 3)\n}")
    assert problems(text) == [f"{at(text, 'yield')}: unknown yield target 'Ad' (did you mean 'Add'?)"]


def test_a_when_block_is_offered_the_steps_of_earlier_blocks():
    text = src("""
        namespace n {
            event facet E(x: Long) => (y: Long)
            workflow W() andThen { total = E(x = 1) } andThen when {
                case totl.y > 0 => { e = E(x = 1) }
                case _ => { f = E(x = 2) }
            }
        }
    """)
    assert problems(text) == [f"{at(text, 'totl')}: unknown step 'totl' (did you mean 'total'?)"]


def test_a_misspelt_mixin_suggests_the_facet_in_its_warning():
    text = src("""
        namespace n {
            facet Timeout(minutes: Long)
            event facet E(x: Long) => (y: Long)
            workflow W() andThen { s = E(x = 1) with Timout(minutes = 2) }
        }
    """)
    assert problems(text) == [f"{at(text, 'Timout')}: warning: mixin 'Timout' names a facet declared nowhere in the "
                              "program: it contributes nothing (declare the facet to pass its arguments) "
                              "(did you mean 'Timeout'?)"]


def test_a_misspelt_prompt_placeholder_suggests_the_parameter():
    text = 'event facet Ask(language: String) => (answer: String) prompt { template "in {langauge}" }\n'
    where = at(text, '"in')
    assert problems(text) == [f"{where}: unknown prompt placeholder '{{langauge}}': 'Ask' has no parameter "
                              "'langauge' (did you mean '{language}'?)"]


# ----------------------------------------------------------------------------- when nothing is offered


def test_a_name_close_to_nothing_gets_no_suggestion():
    text = body("s = Zebra(x = 1)\nyield W(total = ghost.sum)")
    assert problems(text) == [f"{at(text, 'Zebra')}: unknown facet 'Zebra'",
                              f"{at(text, 'ghost')}: unknown step 'ghost'"]


def test_a_step_defined_later_or_in_a_sibling_block_is_not_offered():
    text = src("""
        namespace n {
            event facet E(x: Long) => (y: Long)
            workflow W() andThen {
                a = E(x = totl.y)
                total = E(x = 1)
            } andThen {
                b = E(x = sibling.y)
                c = E(x = siblin.y)
            } andThen {
                sibling = E(x = 2)
            }
        }
    """)
    assert problems(text) == [
        f"{at(text, 'totl')}: unknown step 'totl'",
        f"{at(text, 'sibling.y')}: step 'sibling' is defined in another block and is not visible here",
        f"{at(text, 'siblin.')}: unknown step 'siblin'",
    ]


def test_a_step_is_not_offered_to_its_own_call_but_is_to_its_tail():
    text = body("count = Add(x = coun.sum, y = 1) andThen {\n    t = Add(x = 1, y = coun.sum)\n}")
    call, tail = at(text, "coun.sum, y"), at(text, "coun.sum)")
    assert problems(text) == [f"{call}: unknown step 'coun' (did you mean '$.count'?)",
                              f"{tail}: unknown step 'coun' (did you mean '$.count' or 'count'?)"]


def test_a_declaration_of_a_namespace_not_used_is_offered_by_its_qualified_name():
    text = src("""
        namespace geo { schema Place { name: String } }
        namespace app {
            facet F(p: Plaec)
        }
    """)
    assert problems(text) == [f"{at(text, 'Plaec')}: unknown type 'Plaec' (did you mean 'geo.Place'?)"]


def test_a_visible_short_name_is_offered_rather_than_other_namespaces_namesakes():
    text = src("""
        namespace other { event facet Add(x: Long) => (sum: Long) }
        namespace calc {
            event facet Add(x: Long) => (sum: Long)
            workflow W() andThen { s = Ad(x = 1) }
        }
    """)
    assert problems(text) == [f"{at(text, 'Ad(')}: unknown facet 'Ad' (did you mean 'Add'?)"]


def test_a_name_visible_through_two_uses_is_offered_by_both_qualified_names():
    text = src("""
        namespace a { facet Fetch() }
        namespace b { facet Fetch() }
        namespace app {
            uses a
            uses b
            workflow W() andThen { s = Fetc() }
        }
    """)
    assert problems(text) == [f"{at(text, 'Fetc()')}: unknown facet 'Fetc' (did you mean 'a.Fetch' or 'b.Fetch'?)"]


def test_a_yield_target_not_allowed_here_is_not_offered():
    text = src("""
        namespace n {
            event facet Other(x: Long) => (y: Long)
            workflow W() => (y: Long) andThen { yield Othr(y = 1) }
        }
    """)
    assert problems(text) == [f"{at(text, 'yield')}: unknown yield target 'Othr'"]


def test_a_mixin_is_offered_only_facets_not_schemas():
    text = src("""
        namespace n {
            schema Timeout { minutes: Long }
            event facet E(x: Long) => (y: Long)
            workflow W() andThen { s = E(x = 1) with n.Timout(minutes = 2) }
        }
    """)
    assert problems(text) == [f"{at(text, 'n.Timout')}: unknown mixin facet 'n.Timout'"]


# ----------------------------------------------------------------------------- the suggestion itself


def test_suggestions_are_at_most_three_best_first_then_alphabetical():
    names = ["sum4", "sum2", "sum3", "sum1", "summary", "zzz"]
    assert close_names("sum", names) == ["sum1", "sum2", "sum3"]
    assert close_names("sum", reversed(names)) == ["sum1", "sum2", "sum3"]


def test_case_differences_count_as_close_and_the_word_itself_is_never_offered():
    assert close_names("total", ["Total", "total", "tonal"]) == ["Total"]
    assert close_names("total", ["total", "tonal"]) == ["tonal"]


def test_names_much_less_similar_than_the_best_are_left_out():
    assert close_names("Pointt", ["Point", "Int"]) == ["Point"]


def test_the_suffix_lists_one_two_or_three_names():
    assert did_you_mean("ab", ["abc"]) == " (did you mean 'abc'?)"
    assert did_you_mean("ab", ["abc", "abd"]) == " (did you mean 'abc' or 'abd'?)"
    assert did_you_mean("ab", ["abc", "abd", "abe"]) == " (did you mean 'abc', 'abd' or 'abe'?)"
    assert did_you_mean("ab", ["xyz"]) == ""


def test_a_key_compares_what_the_word_lacks_away():
    assert did_you_mean("cont", ["$.count", "$.label"], key=lambda name: name[2:]) == " (did you mean '$.count'?)"
