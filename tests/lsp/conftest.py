"""A real client talking to ``ffl lsp`` over stdio (pytest-lsp), on a two-file program with a namespace and ``use``.

``program/geo.ffl`` declares ``geo.Area`` and the schema ``geo.Box``;
``program/shop.ffl`` uses them from namespace ``shop``. Edits are sent to the
server only: the files on disk never change.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

PROGRAM = Path(__file__).parent / "program"
GEO = PROGRAM / "geo.ffl"
SHOP = PROGRAM / "shop.ffl"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "interpreter", "lsp"]))
async def client(lsp_client: LanguageClient):
    params = types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        workspace_folders=[types.WorkspaceFolder(uri=PROGRAM.as_uri(), name="program")],
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()
