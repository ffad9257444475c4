"""The directional probes: meaning-changing edits the judge's verdict should follow, each
against a placebo of the same size (pointwise ``sensitivity``, pairwise
``sensitivity_pairwise``)."""
