"""The judge's rate corrected with human labels, as a value: the labelled items' design, the
population of verdicts and labels, and the three estimates (naive, labels only, corrected).

They sit with the agreement probe, which holds the items, verdicts and human labels they are
computed from (the card's ``estimate`` section); ``judgeprobe estimate``
(:mod:`judgeprobe.estimate`) draws the labels, writes labelling sheets and reads them back.
"""
