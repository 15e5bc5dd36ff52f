"""The catalogue side: the entry format, loading YAML into the immutable model, kernels' rules,
upstream releases, wordings and lint. Reads ruamel.yaml and packaging; imports only errkit.core."""
