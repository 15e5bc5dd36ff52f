"""Ranker attention: a Pallas attention kernel with context/candidate masking."""

from kernel.attention import ranker_attention
from kernel.config import BlockSizes
from kernel.sharding import sharded_ranker_attention

__all__ = ["BlockSizes", "ranker_attention", "sharded_ranker_attention"]
