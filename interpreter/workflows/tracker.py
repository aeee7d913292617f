"""What a run reports about itself: the steps query, current details and mirror records.

The tracker only records; the workflow decides when mirror batches are sent.
All updates are O(1) per step event so no workflow task does work
proportional to the graph.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow

STATES = ("running", "completed", "failed", "caught")


class Tracker:
    def __init__(self, mirror: bool = False):
        self.mirror = mirror
        self.steps: dict[str, dict[str, Any]] = {}
        self.counts = dict.fromkeys(STATES, 0)
        self.buffer: list[dict[str, Any]] = []
        self.places: dict[str, tuple[str | None, str, str]] = {}  # path → (parent step, block, root step)
        self.blocks: set[str] = set()  # paths of mirrored blocks
        self.workflow_id = ""
        self.run_id = ""
        self.program_hash = ""  # from the first runner record; step and task records carry it (flow ids)

    def bind(self, workflow_id: str, run_id: str) -> None:
        self.workflow_id, self.run_id = workflow_id, run_id

    # ------------------------------------------------------------------ steps

    def step(self, path: str, facet: str, state: str, *, statement_id: str = "", object_type: str = "",
             params: dict | None = None, returns: dict | None = None, error: str | None = None,
             parent: str | None = None, block: str = "") -> None:
        """Record a step's state; ``parent`` (enclosing step) and ``block`` are given on its first record."""
        record = self.steps.get(path)
        if record is None:
            record = {"path": path, "facet": facet, "state": state, "returns": None, "error": None}
            self.steps[path] = record
        else:
            self.counts[record["state"]] -= 1
            record["state"] = state
        self.counts[state] += 1
        if returns is not None and state != "running":
            record["returns"] = returns
        if error is not None:
            record["error"] = error
        self._details()
        if self.mirror:
            place = self.places.get(path)
            if place is None:
                root = self.places[parent][2] if parent in self.places else (parent or path)
                place = self.places[path] = (parent, block, root)
            self.buffer.append({
                "kind": "step", "workflow_id": self.workflow_id, "run_id": self.run_id, "path": path,
                "statement_id": statement_id, "facet": facet, "object_type": object_type,
                "parent_path": place[0], "block_path": place[1], "root_path": place[2],
                "state": state, "params": params, "returns": returns, "error": error,
                "program_hash": self.program_hash, "time": workflow.now().isoformat(),
            })

    def block(self, path: str, object_type: str, state: str, *, parent: str | None, error: str | None = None,
              returns: dict | None = None) -> None:
        """Mirror-only record of a block (AndThen, AndMap, AndMatch) or a yield (YieldAssignment).

        Blocks are not steps of the steps query; their mirror documents make
        the steps' ``block_id`` resolve. The enclosing block is the nearest
        recorded block whose path is a prefix of ``path``.
        """
        if not self.mirror:
            return
        place = self.places.get(path)
        if place is None:
            enclosing = path
            while "/" in enclosing:
                enclosing = enclosing.rsplit("/", 1)[0]
                if enclosing in self.blocks:
                    break
            else:
                enclosing = ""
            root = self.places[parent][2] if parent in self.places else (parent or path)
            place = self.places[path] = (parent, enclosing, root)
            self.blocks.add(path)
        self.buffer.append({
            "kind": "step", "workflow_id": self.workflow_id, "run_id": self.run_id, "path": path,
            "statement_id": "", "facet": "", "object_type": object_type,
            "parent_path": place[0], "block_path": place[1], "root_path": place[2],
            "state": state, "params": None, "returns": returns, "error": error,
            "program_hash": self.program_hash, "time": workflow.now().isoformat(),
        })

    def task(self, path: str, facet: str, queue: str) -> None:
        """An event-facet activity is scheduled: its task is ``pending`` until a handler reports."""
        if self.mirror:
            self.buffer.append({
                "kind": "task", "workflow_id": self.workflow_id, "run_id": self.run_id, "activity_id": path,
                "facet": facet, "queue": queue, "attempt": 1, "state": "pending",
                "program_hash": self.program_hash, "time": workflow.now().isoformat(),
            })

    def snapshot(self) -> list[dict[str, Any]]:
        return [dict(record) for record in self.steps.values()]

    def _details(self) -> None:
        done = self.counts["completed"] + self.counts["caught"]
        workflow.set_current_details(
            f"steps: {done} done, {self.counts['running']} running, {self.counts['failed']} failed")

    # ------------------------------------------------------------------ runner and log

    def runner(self, workflow_name: str, state: str, *, params: dict | None = None, returns: dict | None = None,
               error: str | None = None, program_hash: str = "") -> None:
        self.program_hash = program_hash or self.program_hash
        if self.mirror:
            self.buffer.append({
                "kind": "runner", "workflow_id": self.workflow_id, "run_id": self.run_id,
                "workflow": workflow_name, "state": state, "params": params, "returns": returns,
                "error": error, "program_hash": program_hash, "time": workflow.now().isoformat(),
            })

    def log(self, path: str, message: str) -> None:
        workflow.logger.info("%s: %s", path or "workflow", message)
        if self.mirror:
            self.buffer.append({"kind": "log", "workflow_id": self.workflow_id, "run_id": self.run_id,
                                "path": path, "message": message, "time": workflow.now().isoformat()})

    def take(self, limit: int) -> list[dict[str, Any]]:
        batch, self.buffer = self.buffer[:limit], self.buffer[limit:]
        return batch
