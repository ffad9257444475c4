"""Which items are labelled, and how they were drawn: what makes the estimate unbiased.

The correction is unbiased only for labels drawn by a known design. Two are known here:

- a simple random sample: every labelled item had the same chance. The data's own labels are
  taken as one (the user's claim, which the docs ask them to check), and ``--label-budget N``
  draws ``N`` of them at random, seeded, the way a user who can afford ``N`` labels would;
- a stratified sample, as ``--suggest`` draws it: the items are split into strata, and each
  stratum's labelled items are a simple random sample of it, so each item's chance of being
  labelled is known (``n_h / M_h``) and the estimate weighs each stratum by its size.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from judgeprobe.errors import ConfigError

UNIFORM = "uniform"
"""The one stratum of a simple random sample."""


@dataclass(frozen=True, slots=True)
class LabelDesign:
    """The labelled items (positions in the population), the stratum each was drawn from, and
    the number of items of every stratum."""

    rows: tuple[int, ...]
    row_strata: tuple[str, ...]
    """The stratum of each labelled item, in the order of ``rows``."""
    sizes: Mapping[str, int]
    """Each stratum's number of items (:data:`UNIFORM` alone for a simple random sample)."""
    description: str

    @property
    def labels(self) -> int:
        return len(self.rows)

    @property
    def stratified(self) -> bool:
        return len(self.sizes) > 1


def uniform_design(
    labelled: NDArray[np.intp], size: int, budget: int | None, seed: int
) -> LabelDesign:
    """``budget`` of the ``labelled`` positions drawn at random (seeded); all of them for None.

    A budget larger than the labelled items is a :class:`ConfigError` naming how many there are.
    """
    pool = np.asarray(labelled, dtype=np.intp)
    sizes = {UNIFORM: size}
    if budget is None:
        rows = tuple(int(k) for k in pool)
        return LabelDesign(rows, (UNIFORM,) * len(rows), sizes, f"all {len(pool)} labels")
    if budget < 1:
        raise ConfigError(
            f"--label-budget must be a positive number of labels or 'all', got {budget}"
        )
    if budget > len(pool):
        raise ConfigError(
            f"--label-budget {budget} is more than the {len(pool)} labelled items of the data"
        )
    rng = np.random.default_rng(seed)
    drawn = np.sort(rng.choice(pool, size=budget, replace=False))
    return LabelDesign(
        tuple(int(k) for k in drawn),
        (UNIFORM,) * budget,
        sizes,
        f"{budget} of {len(pool)} labels drawn at random (seed {seed})",
    )


def parse_budget(text: str | int | None) -> int | None:
    """``all`` (or None) is every label, a positive integer that many.

    >>> parse_budget("all"), parse_budget("50")
    (None, 50)
    """
    if text is None or (isinstance(text, str) and text.strip().lower() == "all"):
        return None
    try:
        value = int(text)
    except ValueError:
        raise ConfigError(
            f"--label-budget must be a positive integer or 'all', not {text!r}"
        ) from None
    if value < 1:
        raise ConfigError(f"--label-budget must be a positive integer or 'all', not {text!r}")
    return value
