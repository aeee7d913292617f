"""One test (or a few) per validation rule: message text and exact line:col of each error."""

from __future__ import annotations

import textwrap

import pytest

from interpreter.compiler import check_sources


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def pos(text: str, needle: str, nth: int = 1) -> tuple[int, int]:
    """1-based line and column of the nth occurrence of ``needle`` in ``text``."""
    index = -1
    for _ in range(nth):
        index = text.index(needle, index + 1)
    line = text.count("\n", 0, index) + 1
    col = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, col


def diags(text: str, path: str = "t.ffl", more: list[tuple[str, str]] | None = None):
    return check_sources([(path, text), *(more or [])])


def expect(text: str, needle: str, *words: str, nth: int = 1, path: str = "t.ffl", more=None) -> None:
    """Exactly the diagnostics of ``text`` include one at ``needle`` whose message has ``words``."""
    line, col = pos(text, needle, nth)
    found = diags(text, path, more)
    hits = [d for d in found if d.file == path and (d.line, d.col) == (line, col)
            and all(w in d.message for w in words)]
    assert hits, f"no error at {line}:{col} with {words}; got: {[str(d) for d in found]}"


def clean(text: str, more=None) -> None:
    found = diags(text, more=more)
    assert not found, [str(d) for d in found]


BASE = """
namespace n {
    event facet E(x: Long) => (y: Long)
    event facet B(flag: Boolean) => (ok: Boolean, n: Long)
    schema Addr { street: String, zip: String }
    workflow W(a: Long, name: String = "z", addr: Addr, flag: Boolean = true, data: Json = null) => (out: Long) andThen {
%s
    }
}
"""


def body(lines: str) -> str:
    return src(BASE) % textwrap.indent(src(lines), " " * 8)


# ----------------------------------------------------------------------------- declarations


def test_valid_base_program_has_no_errors():
    clean(body("s = E(x = $.a)\nyield W(out = s.y)"))


def test_duplicate_declaration_in_one_namespace():
    text = src("""
        namespace n {
            event facet E(x: Long)
            facet E(y: Long)
        }
    """)
    expect(text, "E(y", "duplicate declaration", "n.E")


def test_duplicate_declaration_across_files_of_one_namespace():
    first = "namespace n {\n    facet F()\n}\n"
    second = "namespace n {\n    facet F()\n}\n"
    found = check_sources([("a.ffl", first), ("b.ffl", second)])
    assert [(d.file, d.line, d.col) for d in found] == [("b.ffl", 2, 11)]
    assert "duplicate declaration 'n.F'" in found[0].message


def test_same_name_in_different_namespaces_is_fine():
    clean("namespace a {\n facet F()\n}\nnamespace b {\n facet F()\n}\n")


def test_duplicate_parameter():
    text = src("""
        facet F(a: Long, a: String)
    """)
    expect(text, "a: String", "duplicate parameter 'a'")


def test_unknown_type():
    text = src("""
        namespace n {
            facet F(a: Adress) => (r: [Nope])
        }
    """)
    expect(text, "Adress", "unknown type 'Adress'")
    expect(text, "Nope", "unknown type 'Nope'")


def test_uses_unknown_namespace():
    text = src("""
        namespace n {
            uses nowhere.at.all
            facet F()
        }
    """)
    expect(text, "nowhere", "nowhere.at.all")


def test_uses_existing_namespace_from_another_file():
    other = ("o.ffl", "namespace lib { facet L(v: Long) }\n")
    clean(src("""
        namespace n {
            uses lib
            workflow W() andThen {
                s = L(v = 1)
            }
        }
    """), more=[other])


def test_implicit_argument_its_facet_lacks():
    text = src("""
        namespace n {
            facet T(label: String)
            implicit t = T(label = "x", colour = "red")
        }
    """)
    expect(text, "colour", "implicit 't'", "colour", "n.T")


def test_prompt_placeholder_naming_no_parameter():
    text = src("""
        event facet Ask(question: String) => (answer: String) prompt {
            template "Answer {question} in {langauge}"
        }
    """)
    found = diags(text)
    # on the line of the text holding the placeholder, and also on the declaration's line
    assert [(d.line, d.col) for d in found] == [pos(text, "Ask"), pos(text, '"Answer')], [str(d) for d in found]
    assert all("{langauge}" in d.message for d in found)


def test_prompt_placeholder_on_the_declarations_line_is_reported_once():
    text = 'event facet Ask(q: String) => (a: String) prompt { system "in {lang}" template "{q}" }\n'
    found = diags(text)
    assert [(d.line, d.col) for d in found] == [pos(text, '"in')] and "{lang}" in found[0].message


def test_prompt_placeholders_that_are_parameters_or_not_names_pass():
    clean(src("""
        event facet Ask(question: String) => (answer: String) prompt {
            system "reply as JSON like {\\"a\\": 1} or {{literal}}"
            template "Answer {question} now"
        }
    """))


def test_empty_pre_script_and_empty_script_block():
    text = src("""
        facet F(a: Long) => (r: Long) script "  " andThen script { }
    """)
    found = diags(text)
    assert [d.message for d in found] == ["empty script", "empty script"]
    assert (found[0].line, found[0].col) == pos(text, "script")


# ----------------------------------------------------------------------------- steps and scopes


def test_duplicate_step_in_one_block():
    text = body("s = E(x = 1)\ns = E(x = 2)")
    expect(text, "s = E(x = 2)", "duplicate step 's'")


def test_inner_block_may_not_shadow_outer_step():
    text = body("""
        s = E(x = 1)
        t = E(x = 2) andThen {
            s = E(x = 3)
        }
    """)
    expect(text, "s = E(x = 3)", "'s'", "shadows")


def test_unknown_parameter():
    text = body("s = E(x = $.nope)")
    expect(text, "$.nope", "unknown parameter", "$.nope")


def test_foreach_variable_and_prescript_keys_are_parameters():
    clean(src("""
        event facet E(x: Long) => (y: Long)
        workflow W(items: Json) => (out: Long) script "result['extra'] = 1" andThen foreach v in $.items {
            s = E(x = $.v + $.extra)
        }
    """))


def test_prescript_key_not_set_is_unknown_parameter():
    text = src("""
        event facet E(x: Long) => (y: Long)
        workflow W() script "result['a'] = 1" andThen {
            s = E(x = $.b)
        }
    """)
    expect(text, "$.b", "$.b")


def test_unreadable_prescript_accepts_any_parameter():
    clean(src("""
        event facet E(x: Long) => (y: Long)
        workflow W() script "result.update(params)" andThen {
            s = E(x = $.anything)
        }
    """))


def test_foreach_variable_not_visible_outside_its_body():
    text = src("""
        event facet E(x: Long) => (y: Long)
        workflow W(items: Json) andThen foreach v in $.items {
            s = E(x = $.v)
        } andThen {
            t = E(x = $.v)
        }
    """)
    expect(text, "$.v", "$.v", nth=2)


def test_unknown_step():
    text = body("s = E(x = ghost.y)")
    expect(text, "ghost", "unknown step 'ghost'")


def test_step_defined_later():
    text = body("s = E(x = t.y)\nt = E(x = 1)")
    expect(text, "t.y", "'t'", "before it is defined")


def test_step_of_sibling_block():
    text = src("""
        event facet E(x: Long) => (y: Long)
        workflow W() andThen {
            s = E(x = 1)
        } andThen {
            t = E(x = s.y)
        }
    """)
    expect(text, "s.y", "'s'", "another block")


def test_step_referring_to_itself():
    text = body("s = E(x = s.y)")
    expect(text, "s.y", "'s'", "itself")


def test_step_tail_and_catch_may_reference_the_step():
    clean(body("""
        s = E(x = 1) andThen {
            t = E(x = s.y)
        } catch {
            u = E(x = 0)
            yield E(y = s.y)
        }
    """))


def test_unknown_return_field():
    text = body("s = E(x = 1)\nyield W(out = s.zzz)")
    expect(text, "zzz", "'s'", "zzz")


def test_catch_gives_error_fields_only_with_catch():
    clean(body("""
        s = E(x = 1) catch {
            yield E(y = 0)
        }
        t = B(flag = s.error == s.error_type)
    """))
    text = body("s = E(x = 1)\nt = B(flag = s.error == \"\")")
    expect(text, "error", "unknown return 'error'")


def test_fields_of_schema_step_and_args_of_plain_facet():
    clean(src("""
        namespace n {
            schema Addr { street: String }
            facet Mixed(k: Long = 1)
            facet Holder(v: Long)
            facet Sig() => (r: Long) with Mixed()
            event facet E(x: Long) => (y: Long)
            workflow W() andThen {
                a = Addr(street = "main")
                h = Holder(v = 2)
                g = Sig()
                s = E(x = h.v + g.k + g.r)
            }
        }
    """))
    text = src("""
        namespace n {
            schema Addr { street: String }
            event facet E(x: String)
            workflow W() andThen {
                a = Addr(street = "main")
                s = E(x = a.city)
            }
        }
    """)
    expect(text, "city", "city")


def test_unknown_field_of_schema_typed_parameter():
    text = body("s = E(x = $.addr.zipcode)")
    expect(text, "zipcode", "unknown field 'zipcode'", "n.Addr")


# ----------------------------------------------------------------------------- calls and arguments


def test_unknown_facet():
    text = body("s = Missing(x = 1)")
    expect(text, "Missing", "unknown facet 'Missing'")


def test_ambiguous_short_name():
    text = src("""
        namespace a { facet F() }
        namespace b { facet F() }
        namespace c {
            uses a
            uses b
            workflow W() andThen {
                s = F()
            }
        }
    """)
    expect(text, "F()", "ambiguous", "'F'", "a.F", "b.F", nth=3)


def test_own_namespace_wins_over_uses():
    clean(src("""
        namespace a { facet F() }
        namespace c {
            uses a
            facet F()
            workflow W() andThen {
                s = F()
            }
        }
    """))


def test_argument_the_facet_does_not_declare():
    text = body("s = E(x = 1, z = 2)")
    expect(text, "z = 2", "n.E", "no parameter 'z'")


def test_mixin_argument_checked_against_the_mixin():
    text = src("""
        namespace n {
            facet Tag(label: String)
            event facet E(x: Long)
            workflow W() andThen {
                s = E(x = 1) with Tag(colour = "r")
            }
        }
    """)
    expect(text, "colour", "n.Tag", "no parameter 'colour'")


def test_missing_required_argument_is_absent_not_an_error():
    # docs/language.md: an argument comes from the call, a mixin, an implicit or a default, "else it is absent".
    clean(body("s = E()"))
    clean(src("""
        namespace n {
            facet Tag(label: String)
            event facet Send(parcel: String, label: String)
            workflow W() andThen {
                a = Send(parcel = "p") with Tag(label = "x") as tag
            }
        }
    """))


def test_schema_instantiation_unknown_field_and_mixins():
    text = src("""
        namespace n {
            facet Tag(label: String)
            schema Addr { street: String }
            workflow W() andThen {
                a = Addr(stret = "x") with Tag(label = "y")
            }
        }
    """)
    expect(text, "stret", "unknown field 'stret'", "n.Addr")
    expect(text, "Tag(label = \"y\")", "mixin", "schema")


# ----------------------------------------------------------------------------- yields


def test_yield_to_foreign_target():
    text = body("s = E(x = 1)\nyield E(y = 2)")
    expect(text, "yield E", "cannot yield to 'E'")


def test_yield_to_step_facet_only_inside_its_tail_and_to_signature_mixins():
    clean(src("""
        namespace n {
            facet Mix(m: Long = 0) => (extra: Long)
            event facet E(x: Long) => (y: Long)
            workflow W() => (out: Long) with Mix() andThen {
                s = E(x = 1) andThen {
                    yield E(y = 5)
                }
                yield W(out = s.y)
                yield Mix(extra = 1)
            }
        }
    """))


def test_two_yields_to_one_target_in_one_block():
    text = body("yield W(out = 1)\nyield W(out = 2)")
    expect(text, "yield W(out = 2)", "two yields", "'W'")


def test_yield_argument_naming_no_return():
    text = body("yield W(result = 1)")
    expect(text, "result", "no return 'result'", "n.W")


# ----------------------------------------------------------------------------- when


@pytest.mark.parametrize(
    "cases, needle, nth, words",
    [
        (["case $.a > 1 => { }"], "andThen when", 1, "exactly one default 'case _'"),
        (["case _ => { }", "case $.a > 1 => { }"], "case _", 1, "last"),
        (["case $.a > 1 => { }", "case _ => { }", "case _ => { }"], "case _", 2, "more than one"),
        # a misplaced or extra default is also reported at the when itself, like a missing one
        (["case _ => { }", "case $.a > 1 => { }"], "andThen when", 1, "exactly one default 'case _'"),
        (["case $.a > 1 => { }", "case _ => { }", "case _ => { }"], "andThen when", 1, "exactly one default"),
        (["case _ => { }", "case _ => { }"], "case _", 1, "last"),
    ],
)
def test_when_needs_exactly_one_default_case_last(cases, needle, nth, words):
    text = body("s = E(x = 1) andThen when {\n    " + "\n    ".join(cases) + "\n}")
    expect(text, needle, words, nth=nth)


def test_catch_when_without_default_case():
    text = body("s = E(x = 1) catch when {\n    case s.error_type == \"X\" => { }\n}")
    expect(text, "catch", "case _")


def test_declaration_level_when_sees_earlier_blocks_only():
    clean(src("""
        event facet E(x: Long) => (y: Long)
        workflow W() andThen {
            s = E(x = 1)
        } andThen when {
            case s.y > 1 => { t = E(x = s.y) }
            case _ => { }
        }
    """))
    text = src("""
        event facet E(x: Long) => (y: Long)
        workflow W() andThen when {
            case s.y > 1 => { }
            case _ => { }
        } andThen {
            s = E(x = 1)
        }
    """)
    expect(text, "s.y", "'s'", "another block")


# ----------------------------------------------------------------------------- operator types


@pytest.mark.parametrize(
    "expr, op, words",
    [
        ("$.a && true", "&&", ("'&&'", "Boolean", "Long")),
        ("$.flag || \"x\"", "||", ("'||'", "String")),
        ("!$.name", "!", ("'!'", "String")),
        ("$.addr + 1", "+", ("'+'", "schema", "n.Addr")),
        ("$.flag < true", "<", ("ordered comparison", "Boolean")),
        ("2 * $.addr", "*", ("'*'", "schema")),
        ("$.name * 2", "*", ("'*'", "numbers", "String")),
        ("$.flag + 1", "+", ("'+'", "Boolean")),
        ("$.name % $.a", "%", ("'%'", "String", "Long")),
        ("-$.name", "-", ("'-'", "number", "String")),
        ("$.name < 3", "<", ("ordered comparison", "String", "Long")),
        ("$.addr >= $.addr", ">=", ("ordered comparison", "n.Addr")),
    ],
)
def test_operator_type_errors(expr, op, words):
    text = body(f"s = B(flag = {expr})")
    line, col = pos(text, expr)
    col += expr.index(op)
    found = diags(text)
    assert any((d.line, d.col) == (line, col) and all(w in d.message for w in words) for d in found), \
        [str(d) for d in found]


def test_unknown_types_give_no_operator_errors():
    clean(body("""
        s = B(flag = $.data && ($.data < 3) || !$.data)
        t = B(flag = s.ok && s.n > 1 && $.flag == true && ($.a + 1) * 2 >= 3)
        u = E(x = $.data * 2 + -$.data - ($.data % $.a))
    """))


def test_operators_the_evaluator_accepts_pass():
    # `+` joins two strings or two lists; numbers mix; strings order; `==` takes anything.
    clean(body("""
        s = B(flag = $.name + "x" == "zx" && $.name < "b" && 1 < 2.5 && $.a / 2 > -$.a)
        t = B(flag = [1] + [2] == [1, 2] && $.name != $.a && $.addr == $.addr)
    """))


# ----------------------------------------------------------------------------- all at once


def test_every_error_is_reported_not_just_the_first():
    text = body("""
        s = E(x = ghost.y)
        t = Nope()
        u = E(x = $.missing)
        yield W(out = s.zzz)
    """)
    found = diags(text)
    messages = " | ".join(d.message for d in found)
    for word in ("ghost", "Nope", "$.missing", "zzz"):
        assert word in messages
    assert found == sorted(found)


def test_syntax_error_in_one_file_does_not_stop_the_others():
    broken = ("broken.ffl", "namespace x {\n  facet (\n}\n")
    text = body("s = E(x = ghost.y)")
    found = check_sources([("t.ffl", text), broken])
    assert {d.file for d in found} == {"t.ffl", "broken.ffl"}
    assert any("ghost" in d.message for d in found)


# ----------------------------------------------------------------------------- runtime-aligned details


def test_catch_on_the_called_facet_also_gives_error_fields():
    clean(src("""
        event facet E(x: Long) => (y: Long)
        facet Safe(x: Long) => (y: Long) andThen {
            e = E(x = $.x)
            yield Safe(y = e.y)
        } catch {
            yield Safe(y = 0)
        }
        workflow W() => (msg: String) andThen {
            s = Safe(x = 1)
            yield W(msg = s.error ++ s.error_type)
        }
    """))


def test_nested_tail_may_yield_to_any_enclosing_steps_facet():
    clean(src("""
        event facet E(x: Long) => (y: Long)
        event facet G(x: Long) => (z: Long)
        workflow W() andThen {
            s = E(x = 1) andThen {
                t = G(x = s.y) andThen {
                    yield E(y = t.z)
                    yield G(z = 1)
                }
            }
        }
    """))


def test_qualified_call_needs_no_uses_and_top_level_names_are_visible():
    clean(src("""
        event facet Top(x: Long) => (y: Long)
        namespace lib { event facet L(x: Long) => (y: Long) }
        namespace app {
            workflow W() andThen {
                a = lib.L(x = 1)
                b = Top(x = a.y)
            }
        }
    """))


def test_bare_parameter_name_hints_at_dollar_form():
    text = body("s = E(x = a.y)")
    expect(text, "a.y", "unknown step 'a'", "'$.a'")


def test_signature_mixin_fills_a_required_parameter():
    clean(src("""
        facet Tag(label: String)
        event facet Send(parcel: String, label: String) with Tag(label = "std")
        workflow W() andThen {
            a = Send(parcel = "p")
        }
    """))


def test_signature_mixin_parameters_or_alias_are_body_parameters():
    clean(src("""
        facet Retry(attempts: Long = 3)
        event facet E(x: Long)
        workflow W() with Retry() andThen {
            a = E(x = $.attempts)
        }
        workflow V() with Retry() as retry andThen {
            a = E(x = $.retry.attempts)
        }
    """))
