"""A handler package whose decorated handlers live in a submodule."""

from . import sub  # noqa: F401
