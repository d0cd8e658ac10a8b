"""Small @triton.jit helpers shared by several example kernels (cross-file inlining)."""
import triton
import triton.language as tl


@triton.jit
def silu(x):
    # x * sigmoid(x), computed in fp32
    x = x.to(tl.float32)
    return x / (1.0 + tl.exp(-x))


@triton.jit
def grouped_pid(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """Map a linear tile id to (pid_m, pid_n) so that GROUP_M row-tiles share B tiles in L2."""
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (tile_id % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n
