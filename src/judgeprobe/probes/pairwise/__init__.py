"""The pairwise probes: position swap, agreement with human votes, the length-only null,
length-controlled win rate and self-preference.
"""
