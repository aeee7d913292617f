"""Diagnostics as you type: the compiler's errors and warnings, with their ranges, across files."""

from __future__ import annotations

from lsprotocol import types

from .conftest import GEO, SHOP
from .helpers import edit, open_file, span


async def test_a_clean_program_has_no_diagnostics(client):
    assert await open_file(client, SHOP) == []
    assert list(client.diagnostics[GEO.as_uri()]) == []


async def test_a_misspelt_facet_is_reported_at_its_name_and_cleared_when_fixed(client):
    await open_file(client, SHOP)
    text = SHOP.read_text()
    found = await edit(client, SHOP, text.replace("a = Area(", "a = Aera("))
    assert [(d.range, d.severity, d.message) for d in found] == [
        (span(4, 12, 16), types.DiagnosticSeverity.Error, "unknown facet 'Aera' (did you mean 'Area'?)")]
    assert await edit(client, SHOP, text, version=3) == []


async def test_a_syntax_error_is_reported_while_typing_and_clears(client):
    await open_file(client, SHOP)
    text = SHOP.read_text()
    found = await edit(client, SHOP, text.replace("yield Quote(total = a.area)", "yield Quote(total = a.)"))
    assert len(found) == 1 and found[0].range.start == types.Position(6, 30)
    assert found[0].message.startswith("unexpected ')'")
    assert await edit(client, SHOP, text, version=3) == []


async def test_a_warning_is_published_as_a_warning(client):
    await open_file(client, SHOP)
    text = SHOP.read_text().replace("    use geo\n", "")
    found = await edit(client, SHOP, text)
    assert {(d.severity, d.message.split(";")[0]) for d in found} == {
        (types.DiagnosticSeverity.Warning, "facet 'Box' is not visible here"),
        (types.DiagnosticSeverity.Warning, "facet 'Area' is not visible here"),
    }


async def test_changing_a_facet_in_one_file_updates_the_diagnostics_of_the_file_that_calls_it(client):
    await open_file(client, SHOP)
    await open_file(client, GEO)
    geo = GEO.read_text()
    found = await edit(client, GEO, geo.replace("height: Long = 1", "depth: Long = 1"), wait_for=SHOP)
    assert [(d.range, d.message) for d in found] == [
        (span(4, 36, 42), "unknown argument 'height': facet 'geo.Area' has no parameter 'height'")]
    assert await edit(client, GEO, geo, version=3, wait_for=SHOP) == []
