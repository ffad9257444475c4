"""Contracts that hold across the package: every probe checks its interval options the same way."""

from __future__ import annotations

import dataclasses
import re

import pytest

from judgeprobe.errors import ConfigError
from judgeprobe.probes.registry import build_probe, get_probe_class, probe_names
from judgeprobe.stats import InvalidParameterError

# -- probe parameters ----------------------------------------------------------------------------
INTERVAL_OPTIONS: dict[str, tuple[str, ...]] = {
    "cluster": ("confidence_level", "n_resamples"),
    "human_agreement": ("confidence_level", "n_resamples"),
    "length_controlled_win_rate": ("confidence_level", "n_resamples"),
    "length_null": ("confidence_level", "n_resamples"),
    "permutation": ("confidence_level", "n_resamples"),
    "policy_invariance": ("confidence_level", "n_resamples"),
    "policy_invariance_pairwise": ("confidence_level", "n_resamples"),
    "position": ("confidence_level",),
    "repetition": ("confidence_level", "n_resamples"),
}
"""Every registered probe and the interval options it takes; a new probe must be added here."""

BAD_VALUES: dict[str, tuple[float, ...]] = {
    "confidence_level": (0, 1, 1.5, -0.1),
    "n_resamples": (0, -1),
}
MESSAGES = {
    "confidence_level": "confidence_level must be a number strictly between 0 and 1 (e.g. 0.95), "
    "got {value!r}",
    "n_resamples": "n_resamples must be an integer >= 1, got {value!r}",
}


def _interval_options(name: str) -> set[str]:
    """The interval options probe ``name`` takes, read from its dataclass fields."""
    fields = {f.name for f in dataclasses.fields(get_probe_class(name))}  # type: ignore[arg-type]
    return fields & set(BAD_VALUES)


BAD_OPTIONS = [
    pytest.param(name, option, value, id=f"{name}-{option}={value}")
    for name in probe_names()
    for option in sorted(_interval_options(name))
    for value in BAD_VALUES[option]
]


@pytest.mark.parametrize("name", probe_names())
def test_every_registered_probe_is_in_the_table_with_the_interval_options_it_takes(
    name: str,
) -> None:
    assert name in INTERVAL_OPTIONS, f"probe {name!r} is registered but missing from the table"
    assert set(INTERVAL_OPTIONS[name]) == _interval_options(name)


def test_the_table_lists_only_registered_probes() -> None:
    assert set(INTERVAL_OPTIONS) <= set(probe_names())


@pytest.mark.parametrize(("name", "option", "value"), BAD_OPTIONS)
def test_a_bad_interval_option_is_refused_in_the_same_words_by_every_probe(
    name: str, option: str, value: float
) -> None:
    cls = get_probe_class(name)
    message = MESSAGES[option].format(value=value)
    with pytest.raises(InvalidParameterError, match=f"^{re.escape(message)}$") as made:
        cls(**{option: value})
    assert type(made.value) is InvalidParameterError
    # From a config file the value is first validated against the annotation (0 -> 0.0 for a
    # float), then refused with the same words after where it came from.
    given = float(value) if option == "confidence_level" else value
    where = f"audit.yaml: probe {name!r}"
    message = f"{where}: " + MESSAGES[option].format(value=given)
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        build_probe(cls, {option: value}, where=where)


@pytest.mark.parametrize("name", probe_names())
def test_every_probe_is_made_with_its_default_interval_options(name: str) -> None:
    probe = get_probe_class(name)()
    params = probe.params()
    assert params.get("confidence_level") == 0.95
    assert ("n_resamples" in params) == ("n_resamples" in INTERVAL_OPTIONS.get(name, ()))
