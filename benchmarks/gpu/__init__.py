"""GPU timing tools (run on a machine with a GPU); a package so tests import them as `benchmarks.gpu.<module>`."""
