"""Activity summaries: the step as written is made once per program in a worker, not once per run."""

from __future__ import annotations

from collections import OrderedDict
from types import SimpleNamespace

from interpreter.compiler import compile_sources
from interpreter.program.serialize import content_hash
from interpreter.semantics import FacetCall
from interpreter.workflows import dispatch
from interpreter.workflows.dispatch import Activities

SOURCE = """namespace ns {
    event facet F(i: Long) => (i: Long)
    workflow W() => (i: Long) andThen {
        a = F(i = 1)
        b = F(i = a.i + 1)
        yield W(i = b.i)
    }
}
"""


def test_runs_of_one_program_share_its_step_texts(monkeypatch):
    program = compile_sources([("w.ffl", SOURCE)])
    monkeypatch.setattr(dispatch, "_step_texts", OrderedDict())  # the process's, which other tests fill
    made: list[str] = []
    step_text = dispatch.step_text
    monkeypatch.setattr(dispatch, "step_text", lambda step: made.append(step.id) or step_text(step))
    decl = program.facets["ns.F"]
    steps = program.facets["ns.W"].blocks[0].steps
    summaries = []
    for _run in range(3):  # each run has its own Activities, as each history has its own workflow instance
        session = SimpleNamespace(program_hash=content_hash(program), root="W")
        activities = Activities(session, SimpleNamespace(items={}), admission=None, builtins=None)
        summaries.append([activities.summary(FacetCall(f"b0/{s.name}", decl, s, {})) for s in steps])
    assert summaries[0] == ["a = ns.F(i = 1) · W › a", "b = ns.F(i = a.i + 1) · W › b"] and summaries[2] == summaries[0]
    assert made == [steps[0].id, steps[1].id], "each step's text is made once for three runs"
    assert program == compile_sources([("w.ffl", SOURCE)]), "the texts are kept beside the program, not in it"
