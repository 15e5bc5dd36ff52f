"""The catalogue's snippets as a reader runs them on a GPU, made runnable on this CPU.

Entry pages show what a reader writes: the real GPU modules, and a `# runs on a GPU with cuDNN`
line where the snippet needs cuDNN. Tests run the same text through `on_cpu`, which puts in the
stand-ins of tests/verify (the GPU decode and paged attention modules run in interpret mode and
lowered for CUDA; cuDNN's checks run with its fused kernel giving zeros).
"""

from __future__ import annotations

import re

GPU_MARK = "# runs on a GPU"  # a snippet's line saying it needs one (on a decode or paged import too)
CUDNN_MARK = GPU_MARK + " with cuDNN"
_MODULES = {  # what a reader imports -> the stand-in of the same name
    "from jax.experimental.pallas.ops.gpu import decode_attention": "from verify.gpu_decode import decode_attention",
    "from jax.experimental.pallas.ops.gpu import paged_attention": "from verify.gpu_decode import paged_attention",
}


def on_cpu(source: str) -> str:
    """The snippet with the CPU stand-ins of what it needs a GPU for."""
    for real, stand_in in _MODULES.items():
        source = re.sub(rf"(?m)^([ \t]*){re.escape(real)}\b", lambda m: m.group(1) + stand_in, source)
    return re.sub(rf"(?m)^([ \t]*){re.escape(CUDNN_MARK)}[ \t]*$",
                  lambda m: m.group(1) + "from verify.cudnn import cudnn_on_cpu; cudnn_on_cpu(globals())", source)
