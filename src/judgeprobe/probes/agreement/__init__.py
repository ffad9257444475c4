"""Agreement of a pointwise judge with human labels, against trivial baselines cross-fitted."""
