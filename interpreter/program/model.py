"""The typed tree shared by the compiler and the interpreter workflow.

One set of immutable-by-convention pydantic models serves as the parser's AST
and as the compiled program: the parser fills the syntactic fields, the
compiler fills the resolved ones (``facet``, ``kind``, ``queue``, ``refs``,
``params``, ``id``, ``sees``, and what the interpreter reads of a facet or a
step: ``accepts``, ``required``, ``return_names``, ``catches``) so the
workflow never re-analyses anything.
Every node that can be wrong carries a ``loc`` for ``file:line:col`` errors.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

FORMAT_VERSION = 1
"""Version of the compiled-program JSON layout; bump on incompatible change.

Additions keep the version: their fields have defaults, so a program compiled
by an older release still reads (the facts of program/facts.py are filled
when missing)."""

BUILTIN_TYPES = ("String", "Long", "Int", "Double", "Boolean", "Json")


class Node(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Loc(Node):
    file: str = ""
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


# --------------------------------------------------------------------------- expressions


class Lit(Node):
    """A literal: string, integer, float, boolean or null."""

    k: Literal["lit"] = "lit"
    value: Any = None
    loc: Loc | None = None


class ParamRef(Node):
    """``$.name`` — a parameter, foreach variable or pre-script key."""

    k: Literal["param"] = "param"
    name: str
    loc: Loc | None = None


class StepRef(Node):
    """A bare identifier in an expression: a step of an enclosing scope."""

    k: Literal["step"] = "step"
    step: str
    loc: Loc | None = None


class Attr(Node):
    """``target.name`` — a field of a record (step returns, parameter value, map)."""

    k: Literal["attr"] = "attr"
    target: Expr
    name: str
    loc: Loc | None = None


class Index(Node):
    """``target[index]`` — list element or map key."""

    k: Literal["index"] = "index"
    target: Expr
    index: Expr
    loc: Loc | None = None


class ArrayLit(Node):
    k: Literal["array"] = "array"
    items: list[Expr] = Field(default_factory=list)
    loc: Loc | None = None


class MapEntry(Node):
    key: str
    value: Expr


class MapLit(Node):
    """``#{"k": v, k2: v}``; entries keep source order."""

    k: Literal["map"] = "map"
    entries: list[MapEntry] = Field(default_factory=list)
    loc: Loc | None = None


class Unary(Node):
    k: Literal["unary"] = "unary"
    op: Literal["-", "!"]
    operand: Expr
    loc: Loc | None = None


class Binary(Node):
    """Operators: ``|| && == != < <= > >= ++ + - * / %``."""

    k: Literal["binary"] = "binary"
    op: str
    left: Expr
    right: Expr
    loc: Loc | None = None


Expr = Annotated[
    Lit | ParamRef | StepRef | Attr | Index | ArrayLit | MapLit | Unary | Binary,
    Field(discriminator="k"),
]


# --------------------------------------------------------------------------- calls and statements


class TypeRef(Node):
    """A type as written (``Long``, ``Address``); ``depth`` counts array brackets.

    The compiler replaces a schema ``name`` with its qualified name.
    """

    name: str
    depth: int = 0
    loc: Loc | None = None


class Param(Node):
    """A parameter, return or schema field: ``name: Type = default``."""

    name: str
    type: TypeRef
    default: Expr | None = None
    loc: Loc | None = None


class Arg(Node):
    name: str
    value: Expr
    loc: Loc | None = None


class Policy(Node):
    """Activity options an event facet or one call of it sets in FFL: ``with ffl.Retry(...)``,
    ``with ffl.Timeout(...)``, ``with ffl.Queue(...)``.

    The field names are RetryConfig's (plus ``queue``); None keeps what the
    worker's configuration says. ``heartbeat_seconds == 0`` turns the
    heartbeat timeout off. A call's policy overrides its facet's, which
    overrides the worker's configuration.
    """

    maximum_attempts: int | None = None
    initial_interval_seconds: float | None = None
    backoff_coefficient: float | None = None
    maximum_interval_seconds: float | None = None
    non_retryable_error_types: list[str] | None = None
    start_to_close_seconds: float | None = None
    heartbeat_seconds: float | None = None
    schedule_to_close_seconds: float | None = None
    queue: str | None = None

    def retry_updates(self) -> dict[str, Any]:
        """The RetryConfig fields this policy sets (a heartbeat of 0 becomes None: no heartbeat timeout)."""
        updates = {name: value for name, value in self.model_dump(exclude={"queue"}).items() if value is not None}
        if updates.get("heartbeat_seconds") == 0:
            updates["heartbeat_seconds"] = None
        return updates

    def over(self, base: Policy | None) -> Policy:
        """This policy with the fields it leaves unset taken from ``base``."""
        if base is None:
            return self
        return base.model_copy(update=self.model_dump(exclude_none=True))


class MixinCall(Node):
    """``with M(args) [as alias]``; ``facet`` is M's qualified name once resolved."""

    name: str
    args: list[Arg] = Field(default_factory=list)
    alias: str | None = None
    loc: Loc | None = None
    facet: str | None = None


CallKind = Literal["event", "facet", "workflow", "schema", "builtin"]
"""``builtin``: a step of the reserved namespace ``ffl`` (program/builtins.py), performed by the workflow."""


class Call(Node):
    """``Name(args) with ...``. Resolved fields: ``facet``, ``kind``, ``queue``, and ``policy``
    (this call's ``ffl.Retry``/``ffl.Timeout``/``ffl.Queue`` mixins, taken out of ``mixins``)."""

    name: str
    args: list[Arg] = Field(default_factory=list)
    mixins: list[MixinCall] = Field(default_factory=list)
    loc: Loc | None = None
    facet: str | None = None
    kind: CallKind | None = None
    queue: str | None = None
    policy: Policy | None = None


class Script(Node):
    """Script code; ``id`` (compiled, unique in the program) is how RunScript finds it: by program hash and id."""

    code: str
    language: str = "python"
    loc: Loc | None = None
    id: str = ""


class Prompt(Node):
    system: str | None = None
    template: str | None = None
    model: str | None = None
    loc: Loc | None = None
    # Compile-time only (never serialised): where each entry's text is, so a bad
    # placeholder is reported on its own line.
    _entry_locs: dict[str, Loc] = PrivateAttr(default_factory=dict)


class Yield(Node):
    """``yield T(args)``; ``target`` is T's qualified name once resolved.

    ``refs``/``params`` list the step names and parameter names its arguments read.
    """

    name: str
    args: list[Arg] = Field(default_factory=list)
    loc: Loc | None = None
    target: str | None = None
    refs: list[str] = Field(default_factory=list)
    params: list[str] = Field(default_factory=list)


class Case(Node):
    """``case cond => {...}``; ``condition`` is None for ``case _``."""

    condition: Expr | None = None
    body: Block
    loc: Loc | None = None
    refs: list[str] = Field(default_factory=list)
    params: list[str] = Field(default_factory=list)


BlockKind = Literal["steps", "foreach", "when", "script"]


class Block(Node):
    """One ``andThen`` clause (or a catch body).

    - ``steps``: ``steps`` then ``yields``.
    - ``foreach``: ``var`` bound to each element of ``items``; body in steps/yields.
    - ``when``: ``cases`` in order, ``case _`` last.
    - ``script``: ``script`` whose ``result`` keys become returns.
    ``sees`` (compiled) lists the indexes of earlier sibling blocks whose steps
    this block may reference (a declaration-level ``when`` or ``foreach``);
    ``exports`` names its steps that a step outside the enclosing step's
    ``andThen`` reads (``Step.reaches``): their handles are the ones made there.
    """

    kind: BlockKind = "steps"
    steps: list[Step] = Field(default_factory=list)
    yields: list[Yield] = Field(default_factory=list)
    var: str | None = None
    items: Expr | None = None
    items_refs: list[str] = Field(default_factory=list)
    items_params: list[str] = Field(default_factory=list)
    cases: list[Case] = Field(default_factory=list)
    script: Script | None = None
    loc: Loc | None = None
    sees: list[int] = Field(default_factory=list)
    exports: list[str] = Field(default_factory=list)


class Catch(Node):
    """``catch { ... }`` (a steps block) or ``catch when { ... }`` (a when block)."""

    block: Block
    loc: Loc | None = None


class Step(Node):
    """``name = Call(...) [andThen ...]* [catch ...]``.

    Compiled fields: ``id`` (the statement id, unique in the program, e.g.
    ``calc.Diamond/b0/s1``), ``refs`` (steps its call's arguments and mixin
    arguments read, in first-use order), ``params`` (parameters they read) and
    ``catches`` (the step or its facet has a catch, so it reads ``error`` and
    ``error_type``) and ``reaches`` (steps declared inside its ``andThen``
    blocks that steps beside it read, as the original runtime allowed: their
    handles are made with this step's, so a reader can wait for them).
    """

    name: str
    call: Call
    blocks: list[Block] = Field(default_factory=list)
    catch: Catch | None = None
    loc: Loc | None = None
    id: str = ""
    refs: list[str] = Field(default_factory=list)
    params: list[str] = Field(default_factory=list)
    catches: bool | None = None
    reaches: list[str] = Field(default_factory=list)


# --------------------------------------------------------------------------- declarations

FacetKind = Literal["facet", "event", "workflow"]


class FacetDecl(Node):
    """A facet, event facet or workflow with its optional tail and catch.

    ``script`` is the pre-script (runs before ``blocks``); ``prompt`` makes an
    event facet answered by a language model. ``queue`` is the task queue of
    its namespace (first segment, ``default`` at top level). ``policy`` holds
    its ``ffl.Retry``/``ffl.Timeout``/``ffl.Queue`` mixins (taken out of ``mixins``).

    Compiled for the interpreter: ``accepts`` (argument names a call or a
    run's input may give: parameters, then each signature mixin's alias or,
    without ``as``, its parameters), ``required`` (parameters neither a
    default nor an implicit gives) and ``return_names`` (its returns and its
    signature mixins'). None in a program compiled before they existed
    (program/facts.py fills them when it is read).
    """

    decl: Literal["facet"] = "facet"
    kind: FacetKind
    name: str
    qname: str = ""
    namespace: str = ""
    params: list[Param] = Field(default_factory=list)
    returns: list[Param] = Field(default_factory=list)
    mixins: list[MixinCall] = Field(default_factory=list)
    script: Script | None = None
    blocks: list[Block] = Field(default_factory=list)
    prompt: Prompt | None = None
    catch: Catch | None = None
    doc: str | None = None
    loc: Loc | None = None
    queue: str = "default"
    policy: Policy | None = None
    accepts: list[str] | None = None
    required: list[str] | None = None
    return_names: list[str] | None = None


class SchemaDecl(Node):
    decl: Literal["schema"] = "schema"
    name: str
    qname: str = ""
    namespace: str = ""
    fields: list[Param] = Field(default_factory=list)
    doc: str | None = None
    loc: Loc | None = None


class ImplicitDecl(Node):
    """``implicit name = F(args)``: default arguments for every call of F."""

    decl: Literal["implicit"] = "implicit"
    name: str
    qname: str = ""
    namespace: str = ""
    call: Call
    doc: str | None = None
    loc: Loc | None = None


class Use(Node):
    name: str
    loc: Loc | None = None


class NamespaceDecl(Node):
    decl: Literal["namespace"] = "namespace"
    name: str
    uses: list[Use] = Field(default_factory=list)
    decls: list[Decl] = Field(default_factory=list)
    doc: str | None = None
    loc: Loc | None = None


Decl = Annotated[FacetDecl | SchemaDecl | ImplicitDecl | NamespaceDecl, Field(discriminator="decl")]


class SourceFile(Node):
    """One parsed file. Top-level declarations have ``namespace == ""``."""

    path: str
    decls: list[Decl] = Field(default_factory=list)


# --------------------------------------------------------------------------- compiled program


class Program(Node):
    """A compiled, validated program: everything the interpreter needs.

    Maps are keyed by qualified name and serialised with sorted keys, so the
    same sources give byte-identical JSON and a stable ``content_hash``.
    ``implicits`` maps a facet's qualified name to the implicit calls of it,
    in source order.
    """

    format: int = FORMAT_VERSION
    facets: dict[str, FacetDecl] = Field(default_factory=dict)
    schemas: dict[str, SchemaDecl] = Field(default_factory=dict)
    implicits: dict[str, list[ImplicitDecl]] = Field(default_factory=dict)

    @property
    def workflows(self) -> list[str]:
        return sorted(name for name, f in self.facets.items() if f.kind == "workflow")


for _model in (Attr, Index, ArrayLit, MapEntry, MapLit, Unary, Binary, Case, Block, Catch, Step, NamespaceDecl):
    _model.model_rebuild()
