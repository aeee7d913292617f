"""Layer 2: the program model and the pure expression evaluator."""

from .model import FORMAT_VERSION, Program
from .serialize import content_hash, program_from_json, program_to_json

__all__ = ["FORMAT_VERSION", "Program", "content_hash", "program_from_json", "program_to_json"]
