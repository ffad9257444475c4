"""Running things against a judge: a probe (the stage loop), scoring a dataset, generating responses
and rubric variants.
"""
