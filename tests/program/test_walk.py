"""One walk of a declaration's tree: every node once, as written, each at its one address."""

from __future__ import annotations

from interpreter.compiler import compile_sources
from interpreter.program.locate import block_address, find_block
from interpreter.program.model import Block, Case, Step, Yield
from interpreter.program.walk import Address, blocks_of, steps_of, walk

from .test_locate import SOURCE

CATCHING = """namespace c {
    event facet Try(x: Long) => (y: Long)
    workflow W(x: Long) => (y: Long) andThen {
        t = Try(x = $.x) andThen { u = Try(x = 1) } catch { v = Try(x = 2) }
        yield W(y = t.y)
    } catch {
        w = Try(x = 3)
    }
}
"""


def kinds(decl) -> list[tuple[str, str]]:
    names = {Block: "block", Step: "step", Yield: "yield", Case: "case"}
    return [(str(address), names[type(node)]) for address, node in walk(decl)]


def test_the_walk_visits_every_node_depth_first_in_written_order():
    program = compile_sources([("c.ffl", CATCHING)])
    assert kinds(program.facets["c.W"]) == [
        ("c.W:b0", "block"), ("c.W:b0/s0", "step"),
        ("c.W:b0/s0/b0", "block"), ("c.W:b0/s0/b0/s0", "step"),
        ("c.W:b0/s0/catch", "block"), ("c.W:b0/s0/catch/s0", "step"),
        ("c.W:b0/y0", "yield"),
        ("c.W:catch", "block"), ("c.W:catch/s0", "step"),
    ]
    assert [step.name for step in steps_of(program.facets["c.W"])] == ["t", "u", "v", "w"]


def test_a_case_and_its_body_share_the_address_a_child_is_sent():
    program = compile_sources([("fan.ffl", SOURCE)])
    decl = program.facets["fan.Fan"]
    cases = [(str(address), type(node).__name__) for address, node in walk(decl) if "/c" in str(address)]
    assert cases[:3] == [("fan.Fan:b0/s1/b0/s0/b0/c0", "Case"), ("fan.Fan:b0/s1/b0/s0/b0/c0", "Block"),
                         ("fan.Fan:b0/s1/b0/s0/b0/c0/y0", "Yield")]
    for address, block in blocks_of(decl):  # locate.py finds every block at the walk's address, and back
        assert find_block(program, str(address)) is block
        assert block_address(program, block) == str(address)


def test_an_address_knows_its_parent_and_last_segment():
    address = Address("ns.F") / "b0" / "s1" / "catch"
    assert (str(address), str(address.parent), address.last) == ("ns.F:b0/s1/catch", "ns.F:b0/s1", "catch")
    assert Address("ns.F").last == ""


def test_an_address_reads_back_from_the_text_a_child_is_sent():
    for text in ("ns.F:b0/s1/catch", "ns.F:catch", "ns.F:"):
        assert str(Address.parse(text)) == text
    assert Address.parse("ns.F:b0/s1") == Address("ns.F") / "b0" / "s1"
