"""Kernels, configs, device setups and the report of benchmarks/real_kernels.py."""
