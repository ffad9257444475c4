"""The audit: its config, the run, the family of gated findings, rounds until decided, the bill,
repairs, batch export and the demo.
"""
