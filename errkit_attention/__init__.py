"""Ranker attention: a Pallas attention kernel with context/candidate masking."""

from errkit_attention.attention import ranker_attention
from errkit_attention.config import BlockSizes
from errkit_attention.sharding import sharded_ranker_attention

__all__ = ["BlockSizes", "ranker_attention", "sharded_ranker_attention"]
