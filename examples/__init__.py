"""Example Triton kernels used as kernlint's end-to-end test corpus.

A trailing "expect" comment on a line (the word expect, a colon, then rule codes) marks a deliberate
finding for target H100 (sm_90); every other line is expected to lint clean. The linter never imports
these files. benchmarks/truth_specs.py holds the argument specs used to compile them for ground truth.
"""
