"""The concatenation probes of arXiv 2408.12259: repetition, cluster, permutation and bypass."""
