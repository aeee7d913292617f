"""Names vulture cannot see used: framework callbacks, public API, fields read by libraries.

vulture (./run-tests) reads this file with the code; each name here is used where its comment says.
Anything else it reports is dead code, and goes.
"""

# ruff: noqa

# interpreter/activities/failures.py: the SDK's failure converter reads stack_trace
_.stack_trace

# interpreter/activities/run_header.py: the SDK's worker interceptor calls it for each activity
_.intercept_activity

# interpreter/program/mirror_records.py: keys of a TypedDict, set by the tracker and read by the mirror's documents.py
_.parent_path
_.block_path
_.root_path

# interpreter/activities/handlers.py: the original's registry-runner style, called by handler packages
_.register_handler

# interpreter/activities/listeners.py: public API for handler authors and tests: collects task events
CollectingListener

# interpreter/activities/mirror/program_store.py: public API: the workflows a store holds
_.published

# interpreter/activities/mirror/schema.py: the original runtime's vocabulary, documented and checked by tests/mirror
RUNNER_STATES
TASK_STATES
SERVER_STATES
FACET_INIT_END
FACET_SCRIPTS_BEGIN
FACET_SCRIPTS_END
STATEMENT_SCRIPTS_BEGIN
STATEMENT_SCRIPTS_END
MIXIN_BLOCKS_BEGIN
MIXIN_BLOCKS_CONTINUE
MIXIN_BLOCKS_END
MIXIN_CAPTURE_BEGIN
MIXIN_CAPTURE_END
STATEMENT_BLOCKS_BEGIN
STATEMENT_BLOCKS_END
BLOCK_EXECUTION_BEGIN
BLOCK_EXECUTION_END
STATEMENT_CAPTURE_BEGIN
STATEMENT_CAPTURE_END
CATCH_CONTINUE
CATCH_END
STATEMENT_END
STEP_VOCABULARY
LIFECYCLES
STEP_OBJECT_TYPES
FINISHED_TASK_STATES

# interpreter/activities/program_store.py: public API: the workflows a store holds
_.published

# interpreter/activities/redact.py: logging reads a record's exc_text; a stream's writelines
_.exc_text
_.writelines

# interpreter/cli/logs.py: logging reads exc_text; the SDK calls an interceptor's workflow_interceptor_class
_.exc_text
_.workflow_interceptor_class

# interpreter/compiler/parse_build.py: Lark calls a transformer's methods by the grammar's rule names
_.facet_decl
_.array_type
_.implicit_decl
_.script_code
_.pre_script
_.prompt_entry
_.steps_block
_.foreach_block
_.when_block
_.script_block
_.catch_steps
_.catch_when
_.yield_stmt
_.binary
_.unary
_.attr
_.string
_.true
_.false
_.null
_.array
_.map_entry
_.param_ref
_.step_ref

# interpreter/program/config.py: pydantic reads model_config
model_config
model_config
model_config

# interpreter/program/evaluate.py: the evaluator dispatches on node kinds by method name
_._lit
_._paramref
_._stepref
_._arraylit
_._maplit

# interpreter/program/model.py: pydantic reads model_config; Prompt.system is kept in the compiled program for handlers
model_config
system

# interpreter/testing/__init__.py: module __getattr__, called by Python
__getattr__

# interpreter/testing/pytest_plugin.py: pytest calls its hooks by name, with these parameter names
pytest_addoption
pytest_terminal_summary
exitstatus
pytest_unconfigure

# interpreter/testing/runner.py: a field of the Result a test reads
signals_taken

# interpreter/workflows/ffl_workflow.py: the validator of the ffl.migrate update (@migrate.validator)
check_migrate
