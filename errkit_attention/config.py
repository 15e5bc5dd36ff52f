"""Block sizes of the Pallas kernel. Plain data: validation lives in errkit_attention/_validators.py."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class BlockSizes:
    """Tile sizes of the Pallas attention kernel.

    ``block_q`` / ``block_kv`` tile the forward pass. The backward sizes tile the
    dK/dV kernel (``block_q_dkv``, ``block_kv_dkv``) and the dQ kernel
    (``block_q_dq``, ``block_kv_dq``); ``None`` means "use the forward size".
    """

    block_q: int = 128
    block_kv: int = 128
    block_q_dkv: int | None = None
    block_kv_dkv: int | None = None
    block_q_dq: int | None = None
    block_kv_dq: int | None = None
