# TEMPORARY STUB — replaced by `errkit generate` (issue 3). Do not add logic here.
# Signatures are the contract between the kernel and the generated validators.


def validate_options(implementation, sm_scale, cap, cap_method, causal):
    """implementation: None|'pallas'|'xla' as passed by the user; sm_scale: float|None; cap: float|None."""


def validate_qkv(q, k, v, implementation):
    """implementation: the resolved one, 'pallas' or 'xla'."""


def validate_mask(bound, causal, q, k):
    """bound: None or an array of shape [batch]."""


def validate_config(config, implementation):
    """config: None or kernel.BlockSizes."""


def validate_sharding(mesh, batch_axis, head_axis, q, k):
    """mesh: jax.sharding.Mesh; batch_axis/head_axis: str or None."""
