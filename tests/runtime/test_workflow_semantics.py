"""Runtime semantics of FFLWorkflow on the real dev server, one language rule per test."""

from __future__ import annotations

import asyncio

from interpreter.program.config import RuntimeConfig

from .harness import FAST_RETRY, handler_spans, most_at_once, run_ffl

# ---------------------------------------------------------------- dataflow concurrency and ordering

SLOW = """
namespace t {
    event facet Slow(n: Long) => (v: Long)
    workflow Two() => (a: Long, b: Long) andThen {
        x = Slow(n = 1)
        y = Slow(n = 2)
        yield Two(a = x.v, b = y.v)
    }
}
"""


async def slow(p):
    await asyncio.sleep(1.0)
    return {"v": p["n"] * 10}


async def test_independent_steps_run_concurrently(temporal_client, tmp_path):
    run = await run_ffl(temporal_client, SLOW, "t.Two", handlers={"t.Slow": slow}, tmp_path=tmp_path)
    assert run.error is None, run.message
    assert run.result == {"a": 10, "b": 20}
    assert most_at_once(await handler_spans(run.handle, "t.Slow")) == 2  # both were running at once


FOREACH = """
namespace t {
    event facet Nap(i: Long, count: Long) => (v: Long)
    workflow Each(items: [Long]) => (out: [Long], n: Long) andThen foreach i in $.items {
        s = Nap(i = $.i, count = 4)
        yield Each(out = [s.v])
    }
}
"""


async def nap(p):
    # Later indexes finish first: the result must still follow the list order.
    await asyncio.sleep(0.15 * (p["count"] - p["i"]))
    return {"v": p["i"] * 100}


async def test_foreach_merges_by_index_not_completion(temporal_client, tmp_path):
    run = await run_ffl(temporal_client, FOREACH, "t.Each", {"items": [0, 1, 2, 3]}, handlers={"t.Nap": nap},
                        tmp_path=tmp_path)
    assert run.error is None, run.message
    assert run.result["out"] == [0, 100, 200, 300]
    paths = sorted(s["path"] for s in run.steps)
    assert paths == [f"b0/foreach[{i}]/s" for i in range(4)]
    assert most_at_once(await handler_spans(run.handle, "t.Nap")) == 4  # every iteration at once


async def test_foreach_over_empty_list_runs_nothing(temporal_client, tmp_path):
    run = await run_ffl(temporal_client, FOREACH, "t.Each", {"items": []}, handlers={"t.Nap": nap},
                        tmp_path=tmp_path)
    assert run.error is None, run.message
    assert run.result.get("out") is None
    assert run.steps == []


SIBLINGS = """
namespace t {
    event facet Val(v: Long, delay: Double) => (v: Long)
    workflow Sib() => (xs: [Long], last: Long) andThen {
        a = Val(v = 1, delay = 0.6)
        yield Sib(xs = [a.v], last = a.v)
    } andThen {
        b = Val(v = 2, delay = 0.0)
        yield Sib(xs = [b.v], last = b.v)
    } andThen when {
        case a.v == 1 => { c = Val(v = 3, delay = 0.0)  yield Sib(xs = [c.v]) }
        case _ => { d = Val(v = 4, delay = 0.0)  yield Sib(xs = [d.v]) }
    }
}
"""


async def val(p):
    await asyncio.sleep(p["delay"])
    return {"v": p["v"]}


async def test_sibling_blocks_merge_in_block_order(temporal_client, tmp_path):
    run = await run_ffl(temporal_client, SIBLINGS, "t.Sib", handlers={"t.Val": val}, tmp_path=tmp_path)
    assert run.error is None, run.message
    # b finishes first, but yields merge by block order; the when block waits for a.
    assert run.result == {"xs": [1, 2, 3], "last": 2}
    spans = await handler_spans(run.handle, "t.Val")
    assert spans["b0/a"][0] < spans["b1/b"][1] and spans["b1/b"][0] < spans["b0/a"][1]  # a and b ran at once
    assert spans["b2/c0/c"][0] >= spans["b0/a"][1]  # the when waited for a


# ---------------------------------------------------------------- tails, schemas, implicits, mixins

TAILS = """
namespace t {
    event facet Score(n: Long) => (score: Long, note: String)
    event facet Double(v: Long) => (v: Long)
    schema Point { x: Long, y: Long = 7 }
    facet Wrap(n: Long, tag: String = "w") => (n: Long, tag: String)
    facet Inc(n: Long) => (n: Long) andThen { yield Inc(n = $.n + 1) }
    implicit loud = Wrap(tag = "implicit")
    workflow Tail(n: Long) => (score: Long, note: String, after: Long, p: Json, py: Long, w: Json, inc: Long) andThen {
        s = Score(n = $.n) andThen {
            d = Double(v = s.score)
            yield Score(score = d.v)
        }
        later = Double(v = s.score)
        pt = Point(x = $.n)
        w = Wrap(n = 1)
        i = Inc(n = 1) andThen { yield Inc(n = 41) }
        yield Tail(score = s.score, note = s.note, after = later.v, p = pt, py = pt.y, w = w, inc = i.n)
    }
}
"""


def score(p):
    return {"score": p["n"] + 1, "note": "scored"}


def double(p):
    return {"v": p["v"] * 2}


async def test_step_tail_schema_implicit_and_bare_facet(temporal_client, tmp_path):
    run = await run_ffl(temporal_client, TAILS, "t.Tail", {"n": 4}, handlers={"t.Score": score, "t.Double": double},
                        tmp_path=tmp_path)
    assert run.error is None, run.message
    # The tail's yield to the step's facet overwrites s.score (5 → 10); later steps see the final value.
    assert run.result["score"] == 10
    assert run.result["note"] == "scored"
    assert run.result["after"] == 20
    assert run.result["p"] == {"x": 4, "y": 7}
    assert run.result["py"] == 7
    assert run.result["w"] == {"n": 1, "tag": "implicit"}
    # A step's own tail takes precedence over the facet's body (which would give 2).
    assert run.result["inc"] == 41
    states = {s["path"]: s["state"] for s in run.steps}
    assert states["b0/s"] == "completed" and states["b0/s/b0/d"] == "completed"


MIXIN_SIG = """
namespace t {
    facet Opts(level: Long = 3, mode: String = "m")
    event facet Go(x: Long) => (echo: Json) with Opts(mode = "sig")
    workflow Mix(x: Long) => (echo: Json) with Opts() andThen {
        g = Go(x = $.x + $.level)
        yield Mix(echo = g.echo)
    }
}
"""


def echo(p):
    return {"echo": dict(sorted(p.items()))}


async def test_signature_mixins_add_parameters(temporal_client, tmp_path):
    run = await run_ffl(temporal_client, MIXIN_SIG, "t.Mix", {"x": 1}, handlers={"t.Go": echo}, tmp_path=tmp_path)
    assert run.error is None, run.message
    assert run.result["echo"] == {"x": 4, "level": 3, "mode": "sig"}
    run = await run_ffl(temporal_client, MIXIN_SIG, "t.Mix", {"x": 1, "level": 10}, handlers={"t.Go": echo},
                        tmp_path=tmp_path)
    assert run.result["echo"]["x"] == 11


# ---------------------------------------------------------------- parameters

PARAMS = """
namespace t {
    workflow P(a: Long, b: Long = $.a * 2, c: String = "c") => (sum: Long, c: String) andThen {
        yield P(sum = $.a + $.b, c = $.c)
    }
}
"""


async def test_parameter_defaults_use_earlier_parameters(temporal_client, tmp_path):
    run = await run_ffl(temporal_client, PARAMS, "t.P", {"a": 2}, tmp_path=tmp_path)
    assert run.error is None, run.message
    assert run.result == {"sum": 6, "c": "c"}


async def test_missing_and_unknown_parameters_fail_at_once(temporal_client, tmp_path):
    run = await run_ffl(temporal_client, PARAMS, "t.P", {}, tmp_path=tmp_path)
    assert run.error is not None
    assert "missing required parameter 'a'" in run.message
    run = await run_ffl(temporal_client, PARAMS, "t.P", {"a": 1, "zz": 2, "yy": 3}, tmp_path=tmp_path)
    assert "has no parameter" in run.message and "'zz'" in run.message and "'yy'" in run.message
    assert run.steps == []


MIXED_INPUTS = """
namespace t {
    facet Retry(attempts: Long = 3)
    facet Owner(owner: String = "ops")
    workflow M(a: Long) => (out: Json) with Owner() with Retry() as retry andThen {
        yield M(out = #{"owner": $.owner, "retry": $.retry})
    }
}
"""


async def test_run_inputs_follow_the_compilers_rule_for_signature_mixins(temporal_client, tmp_path):
    # merged Owner: its parameter is an input; aliased Retry: the whole record is, its parameter is not
    run = await run_ffl(temporal_client, MIXED_INPUTS, "t.M", {"a": 1, "owner": "me", "retry": {"attempts": 9}},
                        tmp_path=tmp_path)
    assert run.result == {"out": {"owner": "me", "retry": {"attempts": 9}}}, run.message
    run = await run_ffl(temporal_client, MIXED_INPUTS, "t.M", {"a": 1, "attempts": 9}, tmp_path=tmp_path)
    assert "has no parameter 'attempts'" in run.message and "(parameters: a, owner, retry)" in run.message


# ---------------------------------------------------------------- failures and catch

FAIL = """
namespace t {
    event facet Boom(x: Long) => (v: Long)
    event facet Ok(x: Long) => (v: Long)
    facet Inner(x: Long) => (v: Long) andThen {
        deep = Boom(x = $.x)
        yield Inner(v = deep.v)
    }
    workflow Plain(x: Long) => (v: Long) andThen {
        first = Ok(x = $.x)
        bad = Boom(x = first.v)
        after = Ok(x = bad.v)
        yield Plain(v = after.v)
    }
    workflow Nested(x: Long) => (v: Long) andThen {
        wrap = Inner(x = $.x)
        yield Nested(v = wrap.v)
    }
    workflow Caught(x: Long) => (v: Long, msg: String, kind: String) andThen {
        bad = Boom(x = $.x) catch {
            fix = Ok(x = 0)
            yield Boom(v = fix.v)
        }
        yield Caught(v = bad.v, msg = bad.error, kind = bad.error_type)
    }
    workflow CatchWhen(x: Long) => (route: String) andThen {
        bad = Boom(x = $.x) catch when {
            case bad.error_type == "KeyError" => { yield CatchWhen(route = "key") }
            case _ => { yield CatchWhen(route = "other:" ++ bad.error_type) }
        }
    }
}
"""

calls: list[int] = []


def boom(p):
    if p["x"] == 7:
        raise KeyError("seven")
    raise ValueError(f"boom {p['x']}")


def ok(p):
    calls.append(p["x"])
    return {"v": p["x"] + 1}


HANDLERS = {"t.Boom": boom, "t.Ok": ok}


async def test_failure_names_step_facet_and_cause(temporal_client, tmp_path):
    calls.clear()
    run = await run_ffl(temporal_client, FAIL, "t.Plain", {"x": 1}, handlers=HANDLERS, tmp_path=tmp_path)
    assert run.error is not None
    assert "b0/bad" in run.message and "t.Boom" in run.message and "boom 2" in run.message
    assert run.error_type == "ValueError"
    # the step after the failing one never started
    assert calls == [1]
    states = {s["path"]: s["state"] for s in run.steps}
    assert states == {"b0/first": "completed", "b0/bad": "failed"}


async def test_failure_in_a_composed_facet_names_the_inner_step(temporal_client, tmp_path):
    run = await run_ffl(temporal_client, FAIL, "t.Nested", {"x": 3}, handlers=HANDLERS, tmp_path=tmp_path)
    assert run.error is not None
    assert "b0/wrap/b0/deep" in run.message and "t.Boom" in run.message and "boom 3" in run.message
    # ... and the enclosing step it failed, with its facet
    assert "in step 'b0/wrap' (t.Inner)" in run.message


async def test_catch_gives_error_and_runs_the_catch_block(temporal_client, tmp_path):
    run = await run_ffl(temporal_client, FAIL, "t.Caught", {"x": 5}, handlers=HANDLERS, tmp_path=tmp_path)
    assert run.error is None, run.message
    assert run.result["v"] == 1
    assert run.result["msg"] == "boom 5"  # the handler's own message
    assert run.result["kind"] == "ValueError"
    assert {s["path"]: s["state"] for s in run.steps}["b0/bad"] == "caught"


async def test_catch_when_chooses_by_error_type(temporal_client, tmp_path):
    run = await run_ffl(temporal_client, FAIL, "t.CatchWhen", {"x": 7}, handlers=HANDLERS, tmp_path=tmp_path)
    assert run.error is None, run.message
    assert run.result == {"route": "key"}
    run = await run_ffl(temporal_client, FAIL, "t.CatchWhen", {"x": 1}, handlers=HANDLERS, tmp_path=tmp_path)
    assert run.result == {"route": "other:ValueError"}


DECL_CATCH = """
namespace t {
    event facet Boom(x: Long) => (v: Long)
    facet Safe(x: Long) => (v: Long, note: String) andThen {
        b = Boom(x = $.x)
        yield Safe(v = b.v)
    } catch {
        yield Safe(v = -1, note = "safe " ++ $.x)
    }
    workflow UseSafe(x: Long) => (v: Long, note: String, err: String) andThen {
        s = Safe(x = $.x)
        yield UseSafe(v = s.v, note = s.note, err = s.error_type)
    }
}
"""


async def test_declaration_catch_applies_to_its_calls(temporal_client, tmp_path):
    run = await run_ffl(temporal_client, DECL_CATCH, "t.UseSafe", {"x": 2}, handlers=HANDLERS, tmp_path=tmp_path)
    assert run.error is None, run.message
    assert run.result == {"v": -1, "note": "safe 2", "err": "ValueError"}


WHEN_MISSING = """
namespace t {
    event facet Ok(x: Long) => (v: Long)
    workflow W(m: Json) => (r: String) andThen when {
        case $.m.level > 3 => { yield W(r = "high") }
        case $.m.kind == "x" => { yield W(r = "x") }
        case _ => { yield W(r = "default") }
    }
}
"""


async def test_when_condition_that_cannot_be_read_counts_as_false(temporal_client, tmp_path):
    run = await run_ffl(temporal_client, WHEN_MISSING, "t.W", {"m": {"kind": "x"}}, tmp_path=tmp_path)
    assert run.error is None, run.message
    assert run.result == {"r": "x"}
    run = await run_ffl(temporal_client, WHEN_MISSING, "t.W", {"m": {}}, tmp_path=tmp_path)
    assert run.result == {"r": "default"}


# ---------------------------------------------------------------- scripts

SCRIPTS = """
namespace t {
    facet Pre(x: Long) => (y: Long) script { result["z"] = params["x"] * 3 } andThen {
        yield Pre(y = $.z + 1)
    }
    workflow S(x: Long) => (y: Long, w: Long, s: String) andThen {
        p = Pre(x = $.x)
        yield S(y = p.y)
    } andThen script {
        result["w"] = params["x"] + 100
        result["s"] = "from script"
    }
    workflow Bad(x: Long) => (y: Long) andThen script { result["y"] = 1 / (params["x"] - params["x"]) }
}
"""


async def test_pre_script_and_script_block(temporal_client, tmp_path):
    run = await run_ffl(temporal_client, SCRIPTS, "t.S", {"x": 2}, tmp_path=tmp_path)
    assert run.error is None, run.message
    assert run.result == {"y": 7, "w": 102, "s": "from script"}


async def test_script_error_keeps_its_type(temporal_client, tmp_path):
    run = await run_ffl(temporal_client, SCRIPTS, "t.Bad", {"x": 2}, tmp_path=tmp_path)
    assert run.error is not None
    assert run.error_type == "ZeroDivisionError"
    assert "b0/script" in run.message


PROMPT_AND_NULLS = """
namespace p {
    facet Ask(q: String) => (answer: String, score: Long = 5) prompt { template "Answer {q}" model "m" }
    event facet Ok(x: Long) => (v: Long)
    workflow A(q: String) => (answer: String, score: Long, err: String, kind: String) andThen {
        a = Ask(q = $.q)
        fine = Ok(x = 1) catch { yield A(err = "unexpected") }
        yield A(answer = a.answer, score = a.score, err = fine.error, kind = fine.error_type)
    }
}
"""


def answer(p):
    return {"answer": "42 for " + p["q"]}


async def test_prompt_facet_is_answered_by_a_handler_and_error_fields_read_null(temporal_client, tmp_path):
    run = await run_ffl(temporal_client, PROMPT_AND_NULLS, "p.A", {"q": "life"},
                        handlers={"p.Ask": answer, "p.Ok": ok}, tmp_path=tmp_path)
    assert run.error is None, run.message
    # the return default applies to what the handler left out; a step that did not fail has null error fields
    assert run.result == {"answer": "42 for life", "score": 5, "err": None, "kind": None}


FANOUT_FAIL = """
namespace f {
    event facet Work(i: Long, delay: Double) => (v: Long)
    event facet After(v: Long) => (v: Long)
    facet Item(i: Long) => (v: Long) andThen {
        w = Work(i = $.i, delay = 0.05 + 0.5 * $.i)
        a = After(v = w.v)
        yield Item(v = a.v)
    }
    workflow Fan(items: Json) => (vs: Json) andThen foreach i in $.items {
        it = Item(i = $.i)
        yield Fan(vs = [it.v])
    }
    workflow Early() => (x: Long, y: Long) andThen {
        quick = Work(i = 1, delay = 0.1)
        slow = Work(i = 2, delay = 1.0)
        dep = After(v = quick.v)
        yield Early(x = dep.v, y = slow.v)
    }
}
"""

events: list[tuple[str, int]] = []


async def work(p):
    events.append(("start", p["i"]))
    await asyncio.sleep(p["delay"])
    if p["i"] == 0:
        raise ValueError("item zero")
    events.append(("end", p["i"]))
    return {"v": p["i"]}


async def after(p):
    events.append(("after", p["v"]))
    return {"v": p["v"] * 10}


async def test_a_step_starts_when_its_references_complete_not_later(temporal_client, tmp_path):
    events.clear()
    run = await run_ffl(temporal_client, FANOUT_FAIL, "f.Early", handlers={"f.Work": work, "f.After": after},
                        tmp_path=tmp_path)
    assert run.error is None, run.message
    assert run.result == {"x": 10, "y": 2}
    # in the run's history: dep's handler began while slow's was still running, not once every step was done
    [(dep_start, _)] = (await handler_spans(run.handle, "f.After")).values()
    slow_start, slow_end = (await handler_spans(run.handle, "f.Work"))["b0/slow"]
    assert slow_start < dep_start < slow_end


async def test_failure_in_one_iteration_stops_unstarted_steps_and_names_the_iteration(temporal_client, tmp_path):
    events.clear()
    once = RuntimeConfig(retry=FAST_RETRY)  # one attempt: the failure is known at once
    run = await run_ffl(temporal_client, FANOUT_FAIL, "f.Fan", {"items": [0, 1, 2]},
                        handlers={"f.Work": work, "f.After": after}, tmp_path=tmp_path, config=once)
    assert run.error is not None
    assert "b0/foreach[0]/it/b0/w" in run.message and "f.Work" in run.message and "item zero" in run.message
    assert run.error_type == "ValueError"
    # iterations 1 and 2 were already running their Work step and may finish; their After never starts
    assert not [e for e in events if e[0] == "after"], events


NESTING = """
namespace n {
    event facet List(country: String) => (cities: Json, names: Json)
    event facet Geo(c: String) => (name: String)
    facet Opt(level: Long = 1)
    workflow Sub(x: Long) => (y: Long) andThen { yield Sub(y = $.x * 2) }
    workflow Main(country: String) => (names: Json, sub: Long, rec: Json, kind: String, t: String) andThen {
        l = List(country = $.country) andThen foreach c in l.cities {
            g = Geo(c = $.c)
            yield List(names = [g.name])
        }
        s = Sub(x = 21)
        t = Geo(c = "q") andThen when {
            case s.y > 40 => { yield Geo(name = t.name ++ "!") }
            case _ => { yield Main(kind = "small") }
        }
        r = Opt(level = 2) with Opt() as o
        yield Main(names = l.names, sub = s.y, rec = r, kind = "big", t = t.name)
    }
}
"""


def list_cities(p):
    return {"cities": ["a", "bb", "ccc"], "names": ["HEAD"]}


def geo(p):
    return {"name": p["c"].upper()}


async def test_tail_foreach_over_the_step_workflow_call_and_aliased_mixin(temporal_client, tmp_path):
    run = await run_ffl(temporal_client, NESTING, "n.Main", {"country": "x"},
                        handlers={"n.List": list_cities, "n.Geo": geo}, tmp_path=tmp_path)
    assert run.error is None, run.message
    # tail yields to the step's facet concatenate onto the handler's list, in iteration order
    assert run.result["names"] == ["HEAD", "A", "BB", "CCC"]
    # a workflow called as a step runs inline; a step-level when may read other steps and rewrite its own
    assert run.result["sub"] == 42
    assert run.result["t"] == "Q!"
    assert run.result["rec"] == {"level": 2, "o": {"level": 1}}
    assert run.result["kind"] == "big"
    paths = {s["path"] for s in run.steps}
    assert {"b0/l/b0/foreach[2]/g", "b0/s", "b0/r"} <= paths


FAN = """
namespace big {
    event facet One(i: Long) => (v: Long)
    workflow Fan(n: Long, items: Json) => (out: Json) andThen foreach i in $.items {
        a = One(i = $.i)
        yield Fan(out = [a.v])
    }
}
"""


async def test_wide_foreach_stays_fast_and_ordered(temporal_client, tmp_path):
    items = list(range(200))
    run = await run_ffl(temporal_client, FAN, "big.Fan", {"n": 200, "items": items},
                        handlers={"big.One": lambda p: {"v": p["i"] * 2}}, tmp_path=tmp_path)
    assert run.error is None, run.message
    assert run.result["out"] == [i * 2 for i in items]
    assert most_at_once(await handler_spans(run.handle, "big.One")) > 1
