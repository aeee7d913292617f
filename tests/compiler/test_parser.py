"""Parser tests: one group per language feature, then errors and positions."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from interpreter.compiler.diagnostics import FFLSyntaxError
from interpreter.compiler.parse_build import MAX_EXPRESSION_DEPTH
from interpreter.compiler.parse_prescan import MAX_NESTING
from interpreter.compiler.parser import parse_source
from interpreter.program.model import (
    ArrayLit,
    Attr,
    Binary,
    FacetDecl,
    ImplicitDecl,
    Index,
    Lit,
    MapLit,
    NamespaceDecl,
    ParamRef,
    SchemaDecl,
    StepRef,
    Unary,
)
from tests.conformance_suite import invalid_cases

# ----------------------------------------------------------------------------- helpers


def decls(src: str) -> list:
    return parse_source(src, "t.ffl").decls


def one(src: str):
    (decl,) = decls(src)
    return decl


def expr(src: str):
    """The AST of one expression, written as a parameter default."""
    return one(f"facet F(x: Json = {src})").params[0].default


def show(e) -> str:
    """A compact, fully parenthesised rendering that makes tree shape visible."""
    if isinstance(e, Lit):
        return json.dumps(e.value)
    if isinstance(e, ParamRef):
        return f"$.{e.name}"
    if isinstance(e, StepRef):
        return e.step
    if isinstance(e, Attr):
        return f"{show(e.target)}.{e.name}"
    if isinstance(e, Index):
        return f"{show(e.target)}[{show(e.index)}]"
    if isinstance(e, Unary):
        return f"({e.op}{show(e.operand)})"
    if isinstance(e, Binary):
        return f"({show(e.left)} {e.op} {show(e.right)})"
    if isinstance(e, ArrayLit):
        return "[" + ", ".join(show(i) for i in e.items) + "]"
    if isinstance(e, MapLit):
        return "#{" + ", ".join(f"{m.key}: {show(m.value)}" for m in e.entries) + "}"
    raise AssertionError(f"unexpected node {e!r}")


def syntax_error(src: str):
    with pytest.raises(FFLSyntaxError) as info:
        parse_source(src, "bad.ffl")
    (diag,) = info.value.diagnostics
    assert diag.file == "bad.ffl"
    return diag


def workflow(body: str) -> FacetDecl:
    return one(f"workflow W(a: Long) => (r: Long) {body}")


# ----------------------------------------------------------------------------- lexical


def test_newlines_semicolons_and_spacing_are_interchangeable():
    compact = "namespace n { facet F(a: Long) => (b: Long); workflow W() andThen { x = F(a = 1); yield W() } }"
    spread = """
        namespace n
        {
            facet F(
                a: Long
            ) => (b: Long)
            workflow W()
            andThen {
                x = F(a = 1)
                yield W()
            }
        }
    """

    a, b = parse_source(compact), parse_source(spread)
    assert a.model_dump() != b.model_dump()  # locations differ ...
    for node in (a, b):  # ... but nothing else does
        _drop_locs(node)
    assert a.model_dump() == b.model_dump()


def _drop_locs(node) -> None:
    if isinstance(node, list):
        for item in node:
            _drop_locs(item)
        return
    if not isinstance(node, BaseModel):
        return
    for name in type(node).model_fields:
        if name == "loc":
            setattr(node, name, None)
        else:
            _drop_locs(getattr(node, name))


def test_comments_are_ignored_and_doc_comments_attached():
    src = """
    // line comment
    /** Namespace doc. */
    namespace n {
        /* block { comment } "with a quote */
        /**
         * Facet doc,
         * two lines.
         */
        facet F()
        /** event doc */ event facet E()
        /** wf doc */
        // a plain comment between doc and declaration keeps the doc
        workflow W()
        /** schema doc */ schema S { a: Long }
        /** implicit doc */ implicit i = F()
        facet Undocumented()
    }
    """
    (ns,) = decls(src)
    assert ns.doc == "Namespace doc."
    docs = {d.name: d.doc for d in ns.decls}
    assert docs == {
        "F": "Facet doc,\ntwo lines.",
        "E": "event doc",
        "W": "wf doc",
        "S": "schema doc",
        "i": "implicit doc",
        "Undocumented": None,
    }


def test_doc_comment_only_attaches_to_the_next_token():
    (w,) = decls("/** lost */ workflow W() andThen { /** not a declaration */ s = F() }")
    assert w.doc == "lost"
    (f, g) = decls("facet F() /** for G */ facet G()")
    assert (f.doc, g.doc) == (None, "for G")


def test_string_escapes_numbers_and_constants():
    assert expr(r'"a\"b\\c\nd\te\u00e9\/"').value == 'a"b\\c\nd\te\u00e9/'
    assert expr(r'"it\'s \\\' \ud83d\ude00"').value == "it's \\' \U0001F600"
    assert expr("42").value == 42 and isinstance(expr("42").value, int)
    assert expr("3.14").value == 3.14
    assert expr("2.5E-3").value == 2.5e-3
    assert expr("1e3").value == 1000.0 and isinstance(expr("1e3").value, float)
    assert [expr(w).value for w in ("true", "false", "null")] == [True, False, None]
    assert expr("-7").value == -7  # unary minus on a number literal folds into the literal


def test_identifiers_and_qualified_names():
    (ns,) = decls("namespace a.b_2.C3 { uses x.y.z  use _q\n facet _F9() }")
    assert ns.name == "a.b_2.C3"
    assert [u.name for u in ns.uses] == ["x.y.z", "_q"]
    w = workflow("andThen { s = osm.cache.Download(url = $.a) }")
    assert w.blocks[0].steps[0].call.name == "osm.cache.Download"


# ----------------------------------------------------------------------------- declarations


def test_namespaces_may_repeat_and_declarations_stand_at_top_level():
    src = "facet Top()\nnamespace a { facet F() }\nnamespace a { facet G() }\nschema S { x: Long }"
    top, a1, a2, schema = decls(src)
    assert isinstance(top, FacetDecl) and top.name == "Top"
    assert [d.name for d in a1.decls] == ["F"] and [d.name for d in a2.decls] == ["G"]
    assert isinstance(a1, NamespaceDecl) and isinstance(schema, SchemaDecl)


def test_facet_signature_parameters_defaults_and_returns():
    f = one('facet F(p: Long, q: String = "d", r: [[Double]] = [[1.5]],) => (out: Long, all: [geo.Point])')
    assert f.kind == "facet" and f.name == "F"
    assert [(p.name, p.type.name, p.type.depth) for p in f.params] == [
        ("p", "Long", 0),
        ("q", "String", 0),
        ("r", "Double", 2),
    ]
    assert f.params[0].default is None and f.params[1].default.value == "d"
    assert show(f.params[2].default) == "[[1.5]]"
    assert [(r.name, r.type.name, r.type.depth) for r in f.returns] == [("out", "Long", 0), ("all", "geo.Point", 1)]


def test_facet_forms_without_parameters_or_returns():
    bare, empty, returns_only, no_return = decls(
        "facet A\nfacet B()\nfacet C => (x: Long)\nevent facet D(a: Int)"
    )
    assert (bare.params, bare.returns) == ([], [])
    assert (empty.params, empty.returns) == ([], [])
    assert returns_only.params == [] and [r.name for r in returns_only.returns] == ["x"]
    assert no_return.kind == "event" and no_return.returns == []


def test_declaration_kinds():
    f, e, w = decls("facet F()\nevent facet E()\nworkflow W()")
    assert (f.kind, e.kind, w.kind) == ("facet", "event", "workflow")


def test_schema_fields_by_commas_and_or_newlines():
    s = one("schema S {\n a: String,\n b: [Long]\n c: Boolean = true, d: geo.Addr }")
    assert [(p.name, p.type.name, p.type.depth) for p in s.fields] == [
        ("a", "String", 0),
        ("b", "Long", 1),
        ("c", "Boolean", 0),
        ("d", "geo.Addr", 0),
    ]
    assert s.fields[2].default.value is True
    assert one("schema Empty {}").fields == []


def test_implicit_declaration():
    i = one('implicit defaultTag = ship.Tag(label = "std", n = 2)')
    assert isinstance(i, ImplicitDecl)
    assert i.name == "defaultTag" and i.call.name == "ship.Tag"
    assert [(a.name, a.value.value) for a in i.call.args] == [("label", "std"), ("n", 2)]


def test_signature_mixins():
    f = one("facet F(a: Long) => (b: Long) with M(k = 1) with N() with p.Q")
    assert [(m.name, [a.name for a in m.args], m.alias) for m in f.mixins] == [
        ("M", ["k"], None),
        ("N", [], None),
        ("p.Q", [], None),
    ]


def test_uses_at_top_level_is_rejected_clearly():
    diag = syntax_error("facet F()\nuses a.b")
    assert (diag.line, diag.col) == (2, 6) and "namespace" in diag.message


# ----------------------------------------------------------------------------- tails


def test_several_and_then_blocks_in_order():
    w = workflow("andThen { a = F() }\nandThen foreach v in $.items { b = G(x = $.v) }\nandThen when { case _ => { } }")
    assert [b.kind for b in w.blocks] == ["steps", "foreach", "when"]
    assert w.blocks[1].var == "v" and show(w.blocks[1].items) == "$.items"


def test_pre_script_then_and_then():
    w = workflow('script "result[\\"k\\"] = 1" andThen { s = F(x = $.k) }')
    assert w.script.code == 'result["k"] = 1' and w.script.language == "python"
    assert [b.kind for b in w.blocks] == ["steps"]
    assert workflow("script python { pass }").blocks == []


def test_prompt_keys_in_any_order_and_optional():
    e = one('event facet Ask(q: String) => (a: String) prompt {\n template "Q: {q}"\n system "be brief"\n}')
    assert (e.prompt.system, e.prompt.template, e.prompt.model) == ("be brief", "Q: {q}", None)
    e2 = one('event facet Ask() prompt { model "m1" }')
    assert e2.prompt.model == "m1" and e2.prompt.system is None
    assert one("event facet Ask() prompt { }").prompt is not None


def test_prompt_rejects_unknown_or_repeated_keys():
    assert "unknown prompt key 'sistem'" in syntax_error('event facet A() prompt { sistem "x" }').message
    assert "duplicate prompt key 'model'" in syntax_error('event facet A() prompt { model "a" model "b" }').message


def test_declaration_catch_forms():
    w = workflow("andThen { s = F() }\ncatch { e = Log(m = 1) }")
    assert w.catch.block.kind == "steps" and w.catch.block.steps[0].name == "e"
    w2 = workflow('andThen { s = F() } catch when { case $.a > 1 => { yield W(r = 1) } case _ => { } }')
    assert w2.catch.block.kind == "when"
    assert [c.condition is None for c in w2.catch.block.cases] == [False, True]
    assert one("event facet E() catch { }").catch.block.steps == []
    p = one('event facet E() prompt { model "m" } catch { }')
    assert p.prompt.model == "m" and p.catch is not None


def test_when_block_cases():
    w = workflow("andThen when {\n case $.a < 0 => { r = Reject() }\n case $.a >= 0 && $.a < 9 => { }\n case _ => { yield W(r = 0) } }")
    (block,) = w.blocks
    assert block.kind == "when" and len(block.cases) == 3
    assert show(block.cases[0].condition) == "($.a < 0)"
    assert show(block.cases[1].condition) == "(($.a >= 0) && ($.a < 9))"
    assert block.cases[2].condition is None
    assert block.cases[0].body.steps[0].name == "r" and block.cases[2].body.yields[0].name == "W"
    assert workflow("andThen when { }").blocks[0].cases == []


# ----------------------------------------------------------------------------- scripts


@pytest.mark.parametrize(
    "form",
    ['script "x = 1"', 'script python "x = 1"', "script { x = 1 }", "script python { x = 1 }", "script{x = 1}"],
)
def test_four_script_forms(form):
    w = workflow(f"andThen {form}")
    (block,) = w.blocks
    assert block.kind == "script" and block.script.code == "x = 1" and block.script.language == "python"


def test_brace_script_with_nested_braces_strings_and_comments_is_dedented():
    tq, td = "'" * 3, '"' * 3
    python = [
        'd = {"a": {"b": 1}}   # a comment with } and {',
        "s = " + '"}"' + " + '{' + " + td + " } " + tq + " { " + td + " + " + tq + '}"' + tq,
        "if d:",
        "    result['r'] = f\"{d['a']}\"",
    ]
    body = "\n".join("        " + line for line in python)
    src = "workflow W() andThen script {\n" + body + "\n    }\n    workflow After() andThen { s = F() }"
    w, after = decls(src)
    code = w.blocks[0].script.code
    assert code.splitlines() == python
    compile(code, "<script>", "exec")  # still valid Python
    # locations after a multi-line script body are unaffected
    assert (after.loc.line, after.loc.col) == (7, 14)
    assert after.blocks[0].steps[0].loc.line == 7


def test_empty_scripts_parse():
    assert workflow("andThen script { }").blocks[0].script.code == ""
    assert workflow('andThen script ""').blocks[0].script.code == ""
    assert workflow("script {\n\n}").script.code == ""


def test_script_word_inside_strings_comments_and_references_is_not_a_script():
    w = workflow('andThen foreach x in $.script { s = F(t = "script { x") } // script {')
    assert w.blocks[0].items.name == "script" and w.blocks[0].steps[0].call.args[0].value.value == "script { x"


def test_unterminated_script_body():
    diag = syntax_error("workflow W() andThen script {\n x = {1: 2}\n")
    assert (diag.line, diag.col) == (1, 29) and "unterminated script" in diag.message


# ----------------------------------------------------------------------------- steps and yields


def test_steps_with_mixins_aliases_tails_and_catch():
    w = workflow(
        """andThen {
            c = Send(p = 1) with Retry(n = 5) as retry with Tag(l = "x") as tag
              andThen { x = G() }
              andThen foreach v in c.items { y = G(v = $.v) }
              andThen when { case c.ok => { } case _ => { } }
              andThen script { pass }
              catch when { case c.error_type == "E" => { } case _ => { } }
            d = Plain()
              catch { z = Fix() }
        }"""
    )
    c, d = w.blocks[0].steps
    assert [(m.name, m.alias, [a.name for a in m.args]) for m in c.call.mixins] == [
        ("Retry", "retry", ["n"]),
        ("Tag", "tag", ["l"]),
    ]
    assert [b.kind for b in c.blocks] == ["steps", "foreach", "when", "script"]
    assert c.catch.block.kind == "when"
    assert d.blocks == [] and d.catch.block.steps[0].name == "z"


def test_arguments_across_lines_with_trailing_comma_and_empty_calls():
    w = workflow("andThen {\n s = F(\n a = 1,\n b = 2,\n)\n t = G()\n yield W(\n r = s.x,\n) }")
    s, t = w.blocks[0].steps
    assert [a.name for a in s.call.args] == ["a", "b"] and t.call.args == []
    assert [a.name for a in w.blocks[0].yields[0].args] == ["r"]


def test_interleaved_steps_and_yields_keep_source_order():
    w = workflow("andThen { a = F() yield W(r = 1) b = F() yield X(r = 2) c = F() }")
    block = w.blocks[0]
    assert [s.name for s in block.steps] == ["a", "b", "c"]
    assert [(y.name, y.args[0].value.value) for y in block.yields] == [("W", 1), ("X", 2)]


# ----------------------------------------------------------------------------- expressions


@pytest.mark.parametrize(
    ("src", "tree"),
    [
        ("1 + 2 * 3", "(1 + (2 * 3))"),
        ("1 - 2 - 3", "((1 - 2) - 3)"),
        ("8 / 4 % 3 * 2", "(((8 / 4) % 3) * 2)"),
        ('"a" ++ 1 + 2 ++ "b"', '(("a" ++ (1 + 2)) ++ "b")'),
        ("1 ++ 2 == 3 ++ 4", "((1 ++ 2) == (3 ++ 4))"),
        ("a || b && c", "(a || (b && c))"),
        ("a && b || c && d", "((a && b) || (c && d))"),
        ("!a && -b < 3", "((!a) && ((-b) < 3))"),
        ("-x[0] * 2", "((-x[0]) * 2)"),
        ("- 2 * 3", "(-2 * 3)"),
        ("!!a", "(!(!a))"),
        ("(1 + 2) * 3", "((1 + 2) * 3)"),
        ("a != b", "(a != b)"),
        ("a <= b", "(a <= b)"),
        ("a > b || a >= c", "((a > b) || (a >= c))"),
        ("$.c.name", "$.c.name"),
        ("step.f.g", "step.f.g"),
        ("x[0].name", "x[0].name"),
        ("[1, 2, 3][1]", "[1, 2, 3][1]"),
        ('m["k"][0]', 'm["k"][0]'),
        ("[]", "[]"),
        ('#{"k": 1, k2: $.v, }', "#{k: 1, k2: $.v}"),
        ("#{}", "#{}"),
    ],
)
def test_expression_precedence_and_shape(src, tree):
    assert show(expr(src)) == tree


def test_expression_node_types_and_locations():
    e = expr("s.sum + 1")
    assert isinstance(e, Binary) and e.op == "+"
    assert isinstance(e.left, Attr) and isinstance(e.left.target, StepRef) and e.left.target.step == "s"
    assert e.loc.col == len("facet F(x: Json = s.sum ") + 1  # binary nodes sit at their operator
    assert e.left.target.loc.col == len("facet F(x: Json = ") + 1
    m = expr('#{"b": 1, "a": 2}')
    assert [entry.key for entry in m.entries] == ["b", "a"]  # source order, not sorted


def test_comparisons_do_not_chain():
    diag = syntax_error("facet F(x: Boolean = 1 < 2 < 3)")
    assert (diag.line, diag.col) == (1, 28) and "do not chain" in diag.message


def test_case_underscore_is_the_default_case():
    (block,) = workflow("andThen when { case (_) => { } case _x => { } }").blocks
    assert block.cases[0].condition is None
    assert isinstance(block.cases[1].condition, StepRef) and block.cases[1].condition.step == "_x"


# ----------------------------------------------------------------------------- errors


def test_conformance_syntax_error_is_reported_on_the_offending_line():
    (case,) = [c for c in invalid_cases() if c.path.name == "syntax.ffl"]
    path = str(case.path)
    with pytest.raises(FFLSyntaxError) as info:
        parse_source(case.path.read_text(), path)
    (diag,) = info.value.diagnostics
    assert diag.line == case.line and diag.file == path
    assert diag.message == "unexpected 'yield', expected ')' or ','"
    assert str(info.value) == f"{path}:{diag.line}:{diag.col}: {diag.message}"


@pytest.mark.parametrize(
    ("src", "line", "col", "words"),
    [
        ("facet F(x: Long", 1, 16, ["end of input", "')'"]),
        ("facet F(x: Long = )", 1, 19, ["unexpected ')'", "expected an expression"]),
        ("facet F(x Long)", 1, 11, ["name 'Long'", "':'"]),
        ("workflow W() andThen {\n  s = F(a = 1 2)\n}", 2, 15, ["unexpected '2'", "')' or ','"]),
        ("workflow W() andThen { facet = F() }", 1, 24, ["'facet'", "reserved"]),
        ("workflow W() andThen { s = F(in = 1) }", 1, 30, ["'in'", "reserved"]),
        ("facet F(x: String = 'a')", 1, 21, ["double quotes"]),
        ('facet F(x: String = "abc\n")', 1, 21, ["unterminated string"]),
        ("facet F()\n/* open", 2, 1, ["unterminated comment"]),
        ("facet F(x: Long = 1 @ 2)", 1, 21, ["unexpected character '@'"]),
        ("namespace n { namespace m { } }", 1, 15, ["'namespace'"]),
        ('facet F(x: String = "\\q")', 1, 21, ["invalid escape"]),
        ('facet F(x: String = "\\ud800")', 1, 21, ["surrogate"]),
        ("facet F(x: Double = 1e999)", 1, 21, ["out of range"]),
        ("facet F(x: Long = " + "9" * 5000 + ")", 1, 19, ["too long"]),
        ("workflow W() andThen { s = F }", 1, 30, ["unexpected '}'", "'('"]),
        ("facet F(x: Long = 1 +)", 1, 22, ["unexpected ')'", "an expression"]),
        ("\n\nfacet", 3, 6, ["end of input", "a name"]),
    ],
)
def test_error_messages_and_positions(src, line, col, words):
    diag = syntax_error(src)
    assert (diag.line, diag.col) == (line, col), diag
    for word in words:
        assert word in diag.message, diag


def test_nesting_limits_become_syntax_errors():
    deep_brackets = "facet F(x: Json = " + "[" * (MAX_NESTING + 5) + "]" * (MAX_NESTING + 5) + ")"
    assert "nesting too deep" in syntax_error(deep_brackets).message
    long_chain = "facet F(x: Long = " + " + ".join(["1"] * (MAX_EXPRESSION_DEPTH + 5)) + ")"
    assert "nested too deeply" in syntax_error(long_chain).message
    unary_chain = "facet F(x: Boolean = " + "!" * (MAX_EXPRESSION_DEPTH + 5) + "true)"
    assert "nested too deeply" in syntax_error(unary_chain).message
    ok_chain = "facet F(x: Long = " + " + ".join(["1"] * (MAX_EXPRESSION_DEPTH - 1)) + ")"
    assert one(ok_chain).params[0].default.op == "+"


def test_locations_are_one_based_and_carry_the_path():
    (ns,) = parse_source("namespace n {\n\tfacet F(p: Long)\n}", "dir/x.ffl").decls
    (f,) = ns.decls
    assert (ns.loc.file, ns.loc.line, ns.loc.col) == ("dir/x.ffl", 1, 11)
    assert (f.loc.line, f.loc.col) == (2, 8)
    assert (f.params[0].loc.line, f.params[0].loc.col, f.params[0].type.loc.col) == (2, 10, 13)


def test_windows_line_endings():
    w = one("workflow W()\r\nandThen {\r\n  s = F()\r\n}\r\n")
    assert w.blocks[0].steps[0].loc.line == 3


# ----------------------------------------------------------------------------- conformance


def test_conformance_programs_parse(conformance_folder):
    """Every file of a case parses to declarations; one of them declares a workflow."""
    kinds = []
    for path in sorted(conformance_folder.glob("*.ffl")):
        source = parse_source(path.read_text(), str(path))
        assert source.path == str(path) and source.decls
        kinds += [getattr(d, "kind", None) for ns in source.decls for d in getattr(ns, "decls", [ns])]
    assert "workflow" in kinds


def test_several_syntax_errors_one_per_broken_declaration():
    src = """namespace n {
    facet F(x Long)
    workflow W() andThen {
        s = F(x = 1 2)
        t = G(y = )
    }
    facet Fine(a: Long)
    facet H(a: Long
    facet K()
}"""
    with pytest.raises(FFLSyntaxError) as info:
        parse_source(src, "many.ffl")
    found = [(d.line, d.col) for d in info.value.diagnostics]
    # line 5 shares its declaration with line 4, so recovery skips it
    assert found == [(2, 15), (4, 21), (9, 5)]


def test_recovery_never_resumes_across_unbalanced_braces():
    src = "workflow W() andThen {\n  s = F(\nfacet G(x Long)\n"
    with pytest.raises(FFLSyntaxError) as info:
        parse_source(src, "one.ffl")
    assert [(d.line, d.col) for d in info.value.diagnostics] == [(3, 1)]


def test_deepest_accepted_program_still_serialises():
    """The nesting limits exist so that whatever parses also survives JSON round trips."""
    body = "x = E(a = " + " + ".join(["1"] * MAX_EXPRESSION_DEPTH) + ")"
    for i in range((MAX_NESTING - 3) // 2):
        body = f"s{i} = E(a = 1) catch when {{ case _ => {{ {body} }} }}"
    src = f"namespace n {{ event facet E(a: Long) => (r: Long)\n workflow W() andThen {{ {body} }} }}"
    source = parse_source(src, "deep.ffl")
    assert type(source).model_validate_json(source.model_dump_json()) == source
    compiler = pytest.importorskip("interpreter.compiler")
    serialize = pytest.importorskip("interpreter.program.serialize")
    program = compiler.compile_sources([("deep.ffl", src)])
    assert serialize.program_from_json(serialize.program_to_json(program)) == program
