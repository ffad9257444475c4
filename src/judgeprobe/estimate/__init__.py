"""The number you can believe: the judge's rate corrected with a few human labels.

:func:`estimate` judges a dataset and gives the rate of the rubric's positive class (the mean
score, the win rate) three ways: the judge alone (``naive``), the labelled items alone
(``labels_only``) and the two together, prediction-powered (``corrected``). :func:`suggest`
picks which items to label next; :func:`write_sheet` and :func:`read_labels` write the
labelling sheet and read it back. See ``docs/estimate.md``.
"""

from __future__ import annotations

from judgeprobe.estimate.run import estimate, judge_population
from judgeprobe.estimate.sheet import LabelSheet, SheetRow, read_labels, write_sheet
from judgeprobe.estimate.suggest import Suggestion, suggest
from judgeprobe.probes.agreement.corrected.design import LabelDesign, uniform_design
from judgeprobe.probes.agreement.corrected.estimates import (
    JudgeEstimates,
    LabelsNeeded,
    estimate_population,
)
from judgeprobe.probes.agreement.corrected.population import Population, build_population

__all__ = [
    "JudgeEstimates",
    "LabelDesign",
    "LabelSheet",
    "LabelsNeeded",
    "Population",
    "SheetRow",
    "Suggestion",
    "build_population",
    "estimate",
    "estimate_population",
    "judge_population",
    "read_labels",
    "suggest",
    "uniform_design",
    "write_sheet",
]
