import helion
import helion.language as hl
import torch


# Helion searches only the listed configs, like triton.autotune: the second cannot run on an H100
@helion.kernel(
    configs=[
        helion.Config(block_sizes=[128, 128, 64], num_warps=8, num_stages=4),  # the one we ship
        helion.Config(block_sizes=[256, 256, 128], num_warps=4, num_stages=8),
        helion.Config(block_sizes=[64, 128, 64], num_warps=4, num_stages=3),
    ],
    static_shapes=True,
)
def mm(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    k2, n = y.size()
    out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = torch.addmm(acc, x[tile_m, tile_k], y[tile_k, tile_n])
        out[tile_m, tile_n] = acc.to(x.dtype)
    return out
