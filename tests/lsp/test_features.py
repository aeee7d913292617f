"""Hover, go to definition, references, completion, rename, outline and folding on a program of two files."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from .conftest import GEO, SHOP
from .helpers import doc, edit, open_file, position


def at(path: Path, needle: str, offset: int = 0, length: int | None = None) -> types.Range:
    """The range of ``needle`` (or of ``length`` characters from ``offset`` in it) in the file."""
    start = position(path, needle, offset)
    end = types.Position(start.line, start.character + (len(needle) - offset if length is None else length))
    return types.Range(start, end)


def loc(path: Path, needle: str, offset: int = 0, length: int | None = None) -> tuple[str, types.Range]:
    return path.as_uri(), at(path, needle, offset, length)


async def hover(client, path: Path, needle: str, offset: int = 0) -> str:
    found = await client.text_document_hover_async(types.HoverParams(doc(path), position(path, needle, offset)))
    return found.contents.value if found is not None else ""


async def test_hover_on_a_call_shows_the_facets_signature_task_queue_and_doc(client):
    await open_file(client, SHOP)
    text = await hover(client, SHOP, "Area(width")
    assert "event facet geo.Area(width: Long, height: Long = 1) => (area: Long)" in text
    assert "task queue: `geo`" in text
    assert "Area of a rectangle, in square units." in text


async def test_hover_shows_a_steps_facet_and_returns_a_schemas_fields_and_a_parameters_type(client):
    await open_file(client, SHOP)
    assert "step a = geo.Area => (area: Long)" in await hover(client, SHOP, "a.area")
    assert "schema geo.Box {\n    width: Long\n    height: Long\n}" in await hover(client, SHOP, "Box(")
    assert "$.size: Long" in await hover(client, SHOP, "$.size", 2)
    assert "parameter of `shop.Quote`" in await hover(client, SHOP, "$.size", 2)


async def test_hover_on_a_built_in_shows_its_documentation(client):
    await open_file(client, SHOP)
    text = await hover(client, SHOP, "Sleep(")
    assert "event facet ffl.Sleep(seconds: Double)" in text
    assert "durable timer" in text


async def definition(client, path: Path, needle: str, offset: int = 0) -> list[tuple[str, types.Range]]:
    found = await client.text_document_definition_async(
        types.DefinitionParams(doc(path), position(path, needle, offset)))
    return [(f.uri, f.range) for f in found or []]


async def test_definition_of_a_call_goes_to_the_facet_in_the_other_file(client):
    await open_file(client, SHOP)
    assert await definition(client, SHOP, "Area(width") == [loc(GEO, "Area(", length=4)]
    assert await definition(client, SHOP, "Box(") == [loc(GEO, "Box ", length=3)]


async def test_definition_of_a_step_a_return_a_parameter_and_a_namespace(client):
    await open_file(client, SHOP)
    assert await definition(client, SHOP, "box.width", 0) == [loc(SHOP, "box = ", length=3)]
    assert await definition(client, SHOP, "a.area", 2) == [loc(GEO, "area: Long", length=4)]
    assert await definition(client, SHOP, "Area(width", 5) == [loc(GEO, "width: Long, height", length=5)]
    assert await definition(client, SHOP, "$.size", 2) == [loc(SHOP, "size: Long", length=4)]
    assert await definition(client, SHOP, "use geo", 4) == [loc(GEO, "geo {", length=3)]


async def references(client, path: Path, needle: str, offset: int = 0) -> list[tuple[str, types.Range]]:
    found = await client.text_document_references_async(types.ReferenceParams(
        text_document=doc(path), position=position(path, needle, offset),
        context=types.ReferenceContext(include_declaration=True)))
    return sorted((f.uri, f.range.start.line, f.range.start.character, f.range.end.character) for f in found)


def flat(*locations: tuple[str, types.Range]) -> list:
    return sorted((uri, r.start.line, r.start.character, r.end.character) for uri, r in locations)


async def test_references_of_a_facet_and_of_a_parameter_span_both_files(client):
    await open_file(client, SHOP)
    assert await references(client, GEO, "Area(") == flat(loc(GEO, "Area(", length=4), loc(SHOP, "Area(", length=4))
    assert await references(client, GEO, "height: Long = 1") == flat(
        loc(GEO, "height: Long = 1", length=6), loc(SHOP, "height = box", length=6))
    assert await references(client, SHOP, "box = ") == flat(
        loc(SHOP, "box = ", length=3), loc(SHOP, "box.width", length=3), loc(SHOP, "box.height", length=3))


async def labels(client, path: Path, text: str, needle: str, offset: int) -> set[str]:
    """Completion labels at ``needle`` + ``offset`` of ``text``, sent as the file's new content."""
    await edit(client, path, text)
    found = await client.text_document_completion_async(
        types.CompletionParams(doc(path), position(path, needle, offset, text=text)))
    return {item.label for item in found.items}


async def test_completion_offers_a_steps_returns_after_its_name_and_a_dot(client):
    await open_file(client, SHOP)
    text = SHOP.read_text().replace("total = a.area", "total = a.")
    assert await labels(client, SHOP, text, "a.)", 2) == {"area"}


async def test_completion_offers_parameters_after_dollar_dot_and_arguments_inside_a_call(client):
    await open_file(client, SHOP)
    text = SHOP.read_text()
    assert await labels(client, SHOP, text.replace("width = $.size", "width = $."), "$.,", 2) == {"size"}
    typed = text.replace("a = Area(width = box.width, height = box.height)", "a = Area(width = box.width, ")
    assert await labels(client, SHOP, typed, "box.width, ", 11) == {"height"}


async def test_completion_inside_a_yield_offers_the_returns_of_its_target(client):
    await open_file(client, SHOP)
    text = SHOP.read_text().replace("yield Quote(total = a.area)", "yield Quote(")
    assert await labels(client, SHOP, text, "Quote(\n", 6) == {"total"}


async def test_completion_offers_built_ins_after_ffl_dot_and_visible_names_elsewhere(client):
    await open_file(client, SHOP)
    text = SHOP.read_text()
    assert await labels(client, SHOP, text, "Sleep(", 0) >= {"Sleep", "WaitUntil", "WaitForSignal", "Retry",
                                                              "Timeout", "Queue"}
    anywhere = await labels(client, SHOP, text, "pause", 0)
    assert {"Area", "Box", "Quote", "box", "a", "andThen", "yield", "ffl", "geo"} <= anywhere
    assert "total" not in anywhere


async def test_rename_of_a_facet_edits_its_declaration_and_its_calls_in_every_file(client):
    await open_file(client, SHOP)
    found = await client.text_document_rename_async(
        types.RenameParams(doc(SHOP), position(SHOP, "Area("), new_name="Surface"))
    edits = {uri: sorted((e.range.start.line, e.range.start.character, e.range.end.character, e.new_text)
                         for e in changes) for uri, changes in found.changes.items()}
    geo, shop = at(GEO, "Area(", length=4), at(SHOP, "Area(", length=4)
    assert edits == {GEO.as_uri(): [(geo.start.line, geo.start.character, geo.end.character, "Surface")],
                     SHOP.as_uri(): [(shop.start.line, shop.start.character, shop.end.character, "Surface")]}


async def test_rename_of_a_parameter_leaves_a_schema_field_of_the_same_name_alone(client):
    await open_file(client, SHOP)
    found = await client.text_document_rename_async(
        types.RenameParams(doc(GEO), position(GEO, "width: Long, height"), new_name="w"))
    edits = {uri: sorted((e.range.start.line, e.range.start.character) for e in changes)
             for uri, changes in found.changes.items()}
    param, arg = at(GEO, "width: Long, height"), at(SHOP, "Area(width", 5)
    assert edits == {GEO.as_uri(): [(param.start.line, param.start.character)],
                     SHOP.as_uri(): [(arg.start.line, arg.start.character)]}


async def test_rename_of_a_step_edits_it_and_every_read_of_it(client):
    await open_file(client, SHOP)
    found = await client.text_document_rename_async(
        types.RenameParams(doc(SHOP), position(SHOP, "a.area"), new_name="surface"))
    starts = sorted((e.range.start.line, e.range.start.character) for e in found.changes[SHOP.as_uri()])
    assert starts == sorted((r.start.line, r.start.character) for r in (at(SHOP, "a = Area"), at(SHOP, "a.area")))


async def test_the_outline_nests_declarations_in_their_namespace_and_parameters_in_their_facet(client):
    await open_file(client, GEO)
    found = await client.text_document_document_symbol_async(types.DocumentSymbolParams(doc(GEO)))
    (namespace,) = found
    assert namespace.name == "geo"
    assert [(c.name, c.kind) for c in namespace.children] == [
        ("Area", types.SymbolKind.Event), ("Box", types.SymbolKind.Struct)]
    assert [c.name for c in namespace.children[0].children] == ["width", "height", "area"]
    assert namespace.range.start.line == 1 and namespace.range.end.line == 6


async def test_folding_covers_each_multi_line_brace_block_and_doc_comment(client):
    await open_file(client, SHOP)
    found = await client.text_document_folding_range_async(types.FoldingRangeParams(doc(SHOP)))
    assert sorted((r.start_line, r.end_line) for r in found) == [(0, 8), (2, 7)]


async def test_a_built_in_and_a_namespace_cannot_be_renamed_but_a_step_can(client):
    await open_file(client, SHOP)

    async def prepare(needle: str) -> types.Range | None:
        found = await client.text_document_prepare_rename_async(
            types.PrepareRenameParams(doc(SHOP), position(SHOP, needle)))
        return found if isinstance(found, types.Range) or found is None else found.range

    assert await prepare("Sleep(") is None
    assert await prepare("geo\n") is None
    assert await prepare("pause =") == at(SHOP, "pause")


async def test_semantic_tokens_tell_a_step_a_facet_a_parameter_and_a_return_apart(client):
    await open_file(client, SHOP)
    found = await client.text_document_semantic_tokens_full_async(types.SemanticTokensParams(doc(SHOP)))
    tokens, line, start = [], 0, 0
    for i in range(0, len(found.data), 5):
        delta_line, delta_start, length, kind, modifiers = found.data[i:i + 5]
        line, start = line + delta_line, (start if delta_line == 0 else 0) + delta_start
        tokens.append((line, start, length, kind, modifiers))
    legend = ["namespace", "function", "struct", "parameter", "property", "variable"]
    text = SHOP.read_text().split("\n")
    named = [(text[ln][s:s + n], legend[k], m) for ln, s, n, k, m in tokens if ln == 4]
    assert named == [("a", "variable", 1), ("Area", "function", 0), ("width", "parameter", 0),
                     ("box", "variable", 0), ("width", "property", 0), ("height", "parameter", 0),
                     ("box", "variable", 0), ("height", "property", 0)]
    assert ("ffl", "namespace", 2) in [(text[ln][s:s + n], legend[k], m) for ln, s, n, k, m in tokens]
