"""Builds model nodes from grammar rules, called by Lark's LALR parser on every reduce.

Running inside the parser (Lark's embedded transformer) means no parse tree is
built and nothing recurses, however deep the input. Per-parse data (file name,
script bodies, doc comments) lives in a context variable, so one cached Lark
parser serves every thread.
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from lark import Token, Transformer

from ..program.model import (
    Arg,
    ArrayLit,
    Attr,
    Binary,
    Block,
    Call,
    Case,
    Catch,
    FacetDecl,
    ImplicitDecl,
    Index,
    Lit,
    Loc,
    MapEntry,
    MapLit,
    MixinCall,
    NamespaceDecl,
    Param,
    ParamRef,
    Prompt,
    SchemaDecl,
    Script,
    SourceFile,
    Step,
    StepRef,
    TypeRef,
    Unary,
    Use,
    Yield,
)
from .parse_prescan import string_value

MAX_EXPRESSION_DEPTH = 64
"""Deepest expression tree accepted; deeper trees break serialisation and evaluation."""
PROMPT_KEYS = ("system", "template", "model")


class BuildError(Exception):
    """A syntax problem the grammar cannot express, found while building a node."""

    def __init__(self, where: Token | Loc | None, message: str):
        super().__init__(message)
        if isinstance(where, Token):
            self.line, self.col = where.line or 0, where.column or 0
        else:
            self.line, self.col = (where.line, where.col) if where else (0, 0)
        self.message = message


@dataclass
class ParseState:
    path: str
    scripts: dict[int, str]
    docs: dict[int, str]
    depths: dict[int, tuple[int, Any]] = field(default_factory=dict)


STATE: ContextVar[ParseState] = ContextVar("ffl_parse_state")


class QName(NamedTuple):
    name: str
    loc: Loc


class Params(list):
    """Parameter list of a signature."""


class Returns(list):
    """Return list of a signature."""


class Args(list):
    """Arguments of a call."""


def _loc(token: Token) -> Loc:
    return Loc(file=STATE.get().path, line=token.line or 0, col=token.column or 0)


def _tokens(children: list) -> list[Token]:
    return [c for c in children if isinstance(c, Token)]


def _body(children: list) -> tuple[list[Step], list[Yield]]:
    return [c for c in children if isinstance(c, Step)], [c for c in children if isinstance(c, Yield)]


def _unescape(token: Token) -> str:
    """A string literal's value: JSON escapes, plus ``\\'`` for a single quote."""
    try:
        return string_value(token.value)
    except ValueError as exc:
        raise BuildError(token, str(exc)) from None


class Builder(Transformer):
    """One method per grammar rule (or alias); children are tokens and built nodes."""

    # ------------------------------------------------------------------ declarations

    def start(self, children: list) -> SourceFile:
        for child in children:
            if isinstance(child, Use):
                raise BuildError(child.loc, "'uses' is only allowed inside a namespace")
        return SourceFile(path=STATE.get().path, decls=children)

    def namespace(self, children: list) -> NamespaceDecl:
        keyword, qname, *items = children
        return NamespaceDecl(
            name=qname.name,
            uses=[i for i in items if isinstance(i, Use)],
            decls=[i for i in items if not isinstance(i, Use)],
            doc=STATE.get().docs.get(keyword.start_pos),
            loc=qname.loc,
        )

    def uses(self, children: list) -> Use:
        keyword, qname = children
        return Use(name=qname.name, loc=qname.loc)

    def facet_decl(self, children: list) -> FacetDecl:
        tokens = _tokens(children)
        kinds = {t.type for t in tokens}
        kind = "event" if "EVENT" in kinds else "workflow" if "WORKFLOW" in kinds else "facet"
        name = next(t for t in tokens if t.type == "IDENT")
        decl = FacetDecl(kind=kind, name=name.value, loc=_loc(name), doc=STATE.get().docs.get(tokens[0].start_pos))
        for child in children:
            if isinstance(child, Params):
                decl.params = list(child)
            elif isinstance(child, Returns):
                decl.returns = list(child)
            elif isinstance(child, MixinCall):
                decl.mixins.append(child)
            elif isinstance(child, Script):
                decl.script = child
            elif isinstance(child, Block):
                decl.blocks.append(child)
            elif isinstance(child, Prompt):
                decl.prompt = child
            elif isinstance(child, Catch):
                decl.catch = child
        return decl

    def params(self, children: list) -> Params:
        return Params(children)

    def returns(self, children: list) -> Returns:
        return Returns(children)

    def param(self, children: list) -> Param:
        name, type_ref, *default = children
        return Param(name=name.value, type=type_ref, default=default[0] if default else None, loc=_loc(name))

    def type(self, children: list) -> TypeRef:
        (qname,) = children
        return TypeRef(name=qname.name, depth=0, loc=qname.loc)

    def array_type(self, children: list) -> TypeRef:
        (inner,) = children
        return TypeRef(name=inner.name, depth=inner.depth + 1, loc=inner.loc)

    def schema_decl(self, children: list) -> SchemaDecl:
        keyword, name, *fields = children
        return SchemaDecl(name=name.value, fields=fields, doc=STATE.get().docs.get(keyword.start_pos), loc=_loc(name))

    def implicit_decl(self, children: list) -> ImplicitDecl:
        keyword, name, call = children
        return ImplicitDecl(name=name.value, call=call, doc=STATE.get().docs.get(keyword.start_pos), loc=_loc(name))

    # ------------------------------------------------------------------ tails

    def mixin(self, children: list) -> MixinCall:
        qname = children[1]
        args = next((c for c in children if isinstance(c, Args)), Args())
        idents = [c for c in children[2:] if isinstance(c, Token) and c.type == "IDENT"]
        return MixinCall(name=qname.name, args=list(args), alias=idents[0].value if idents else None, loc=qname.loc)

    def script_code(self, children: list) -> tuple[str, Token]:
        token = children[-1]
        if token.type == "STRING":
            return _unescape(token), token
        code = STATE.get().scripts.get(token.start_pos)
        if code is None:
            raise BuildError(token, "unexpected NUL character")
        return code, token

    def pre_script(self, children: list) -> Script:
        keyword, (code, _) = children
        return Script(code=code, loc=_loc(keyword))

    def prompt(self, children: list) -> Prompt:
        keyword, *entries = children
        values: dict[str, str] = {}
        locs: dict[str, Loc] = {}
        for key, value, loc in entries:
            if key.value in values:
                raise BuildError(key, f"duplicate prompt key '{key.value}'")
            values[key.value] = value
            locs[key.value] = loc
        prompt = Prompt(**values, loc=_loc(keyword))
        prompt._entry_locs = locs
        return prompt

    def prompt_entry(self, children: list) -> tuple[Token, str, Loc]:
        key, value = children
        if key.value not in PROMPT_KEYS:
            raise BuildError(key, f"unknown prompt key '{key.value}', expected system, template or model")
        return key, _unescape(value), _loc(value)

    def steps_block(self, children: list) -> Block:
        steps, yields = _body(children)
        return Block(kind="steps", steps=steps, yields=yields, loc=_loc(children[0]))

    def foreach_block(self, children: list) -> Block:
        keyword, _, var, items, *body = children
        steps, yields = _body(body)
        return Block(kind="foreach", var=var.value, items=items, steps=steps, yields=yields, loc=_loc(keyword))

    def when_block(self, children: list) -> Block:
        return Block(kind="when", cases=children[2:], loc=_loc(children[0]))

    def script_block(self, children: list) -> Block:
        keyword, script_keyword, (code, _) = children
        return Block(kind="script", script=Script(code=code, loc=_loc(script_keyword)), loc=_loc(keyword))

    def catch_steps(self, children: list) -> Catch:
        steps, yields = _body(children)
        loc = _loc(children[0])
        return Catch(block=Block(kind="steps", steps=steps, yields=yields, loc=loc), loc=loc)

    def catch_when(self, children: list) -> Catch:
        loc = _loc(children[0])
        return Catch(block=Block(kind="when", cases=children[2:], loc=loc), loc=loc)

    def case(self, children: list) -> Case:
        keyword, condition, *body = children
        if isinstance(condition, StepRef) and condition.step == "_":
            condition = None
        steps, yields = _body(body)
        loc = _loc(keyword)
        return Case(condition=condition, body=Block(kind="steps", steps=steps, yields=yields, loc=loc), loc=loc)

    # ------------------------------------------------------------------ statements

    def step(self, children: list) -> Step:
        name, call, *tail = children
        return Step(
            name=name.value,
            call=call,
            blocks=[c for c in tail if isinstance(c, Block)],
            catch=next((c for c in tail if isinstance(c, Catch)), None),
            loc=_loc(name),
        )

    def yield_stmt(self, children: list) -> Yield:
        keyword, qname, args = children
        return Yield(name=qname.name, args=list(args), loc=_loc(keyword))

    def call(self, children: list) -> Call:
        qname, args, *mixins = children
        return Call(name=qname.name, args=list(args), mixins=mixins, loc=qname.loc)

    def args(self, children: list) -> Args:
        return Args(children)

    def arg(self, children: list) -> Arg:
        name, value = children
        return Arg(name=name.value, value=value, loc=_loc(name))

    def qname(self, children: list) -> QName:
        return QName(".".join(t.value for t in children), _loc(children[0]))

    # ------------------------------------------------------------------ expressions

    def _expr(self, node: Any, where: Token | Loc | None, *operands: Any) -> Any:
        """Record ``node``'s depth, refusing trees deeper than MAX_EXPRESSION_DEPTH."""
        depths = STATE.get().depths
        depth = 1 + max((depths.get(id(o), (1, None))[0] for o in operands), default=0)
        if depth > MAX_EXPRESSION_DEPTH:
            raise BuildError(where, f"expression nested too deeply (more than {MAX_EXPRESSION_DEPTH} levels)")
        if operands:
            depths[id(node)] = (depth, node)
        return node

    def binary(self, children: list) -> Binary:
        left, op, right = children
        return self._expr(Binary(op=op.value, left=left, right=right, loc=_loc(op)), op, left, right)

    def unary(self, children: list) -> Any:
        op, operand = children
        if (
            op.value == "-"
            and isinstance(operand, Lit)
            and isinstance(operand.value, (int, float))
            and not isinstance(operand.value, bool)
        ):
            return Lit(value=-operand.value, loc=_loc(op))
        return self._expr(Unary(op=op.value, operand=operand, loc=_loc(op)), op, operand)

    def index(self, children: list) -> Index:
        target, index = children
        return self._expr(Index(target=target, index=index, loc=target.loc), target.loc, target, index)

    def attr(self, children: list) -> Attr:
        target, name = children
        return self._expr(Attr(target=target, name=name.value, loc=_loc(name)), name, target)

    def string(self, children: list) -> Lit:
        (token,) = children
        return Lit(value=_unescape(token), loc=_loc(token))

    def int(self, children: list) -> Lit:
        (token,) = children
        try:
            value = int(token.value)
        except ValueError:
            raise BuildError(token, "integer literal too long") from None
        return Lit(value=value, loc=_loc(token))

    def float(self, children: list) -> Lit:
        (token,) = children
        value = float(token.value)
        if not math.isfinite(value):
            raise BuildError(token, "number literal out of range")
        return Lit(value=value, loc=_loc(token))

    def true(self, children: list) -> Lit:
        return Lit(value=True, loc=_loc(children[0]))

    def false(self, children: list) -> Lit:
        return Lit(value=False, loc=_loc(children[0]))

    def null(self, children: list) -> Lit:
        return Lit(value=None, loc=_loc(children[0]))

    def array(self, children: list) -> ArrayLit:
        bracket, *items = children
        return self._expr(ArrayLit(items=items, loc=_loc(bracket)), bracket, *items)

    def map(self, children: list) -> MapLit:
        brace, *entries = children
        node = MapLit(entries=entries, loc=_loc(brace))
        return self._expr(node, brace, *(e.value for e in entries))

    def map_entry(self, children: list) -> MapEntry:
        key, value = children
        return MapEntry(key=_unescape(key) if key.type == "STRING" else key.value, value=value)

    def param_ref(self, children: list) -> ParamRef:
        (token,) = children
        return ParamRef(name=token.value[2:], loc=_loc(token))

    def step_ref(self, children: list) -> StepRef:
        (token,) = children
        return StepRef(step=token.value, loc=_loc(token))

