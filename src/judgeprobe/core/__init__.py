"""The contracts every floor above speaks: the request, the verdict, the Judge protocol, a probe's
plan and its verdicts, the evidence behind a finding, pricing and pre-registered falsifiers.
"""
