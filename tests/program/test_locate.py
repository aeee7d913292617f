"""What a foreach body reads from outside it: the values a child workflow is sent with its slice."""

from __future__ import annotations

from interpreter.compiler import compile_sources
from interpreter.program.locate import body_reads

SOURCE = """namespace fan {
    event facet Add(x: Long, y: Long) => (sum: Long)
    workflow Fan(items: Json, k: Long, big: Json, label: String) => (sums: Json) andThen {
        base = Add(x = $.k, y = 0)
        all = Add(x = 0, y = 0) andThen foreach n in $.items {
            a = Add(x = $.n, y = base.sum) andThen when {
                case $.label == "x" => { yield Fan(sums = [a.sum]) }
                case _ => { yield Fan(sums = [$.k]) }
            }
        }
    }
    workflow Scripted(items: Json, k: Long) => (out: Json) andThen {
        all = Add(x = 0, y = 0) andThen foreach n in $.items {
            a = Add(x = $.n, y = 1) andThen script python "result = {'out': [1]}"
        }
    }
}
"""


def foreach_of(program, workflow: str):
    return program.facets[workflow].blocks[0].steps[-1].blocks[0]


def test_a_foreach_body_reads_its_outer_steps_and_only_the_parameters_it_names():
    program = compile_sources([("fan.ffl", SOURCE)])
    reads = body_reads(program, foreach_of(program, "fan.Fan"))
    assert reads.outer_steps == ("base",)
    # the loop variable and the list it iterates are not sent; `big` is read by nothing in the body
    assert reads.params == ("n", "label", "k")


def test_a_foreach_body_with_a_script_block_reads_every_parameter():
    program = compile_sources([("fan.ffl", SOURCE)])
    assert body_reads(program, foreach_of(program, "fan.Scripted")).params is None
