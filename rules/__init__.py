"""kernlint's built-in rules, one per module (installed as `kernlint.rules`).

Code ranges: KL0xx engine, KL1xx shared/tensor memory, KL2xx registers and occupancy,
KL3xx source correctness and efficiency, KL4xx config hygiene, KL5xx Helion.
"""
