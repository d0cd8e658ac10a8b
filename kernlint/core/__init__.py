"""Base utilities every layer may import: findings (`diagnostic`), reading source files (`source_files`,
`text_lines`), module names (`module_names`), the config store's format (`config_store`), atomic writes
(`atomic_io`), the deep-stack engine thread (`deep_stack`) and cancellation (`cancel`).

Stdlib only, and nothing here imports the rest of kernlint: the runtime shim and the cold path of the command
line import these modules without loading libcst or the engine. Empty on purpose: import the modules.
"""
