"""The adversarial probes: master keys, forged verdicts and smuggled text, each tried in every
form of its attack against a placebo of the same size, scored as the attacker scores them.
"""
