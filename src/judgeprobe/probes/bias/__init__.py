"""The bias battery: verbosity, injection, authority, bandwagon and distraction, each against a
size-matched placebo.
"""
