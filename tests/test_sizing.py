"""Designs sized by the question: as many concatenations as a decision needs, no more than the
items can carry, short ones first; ``design: paper`` restores the paper's protocol."""

from __future__ import annotations

import math

import pytest

from judgeprobe.errors import ConfigError
from judgeprobe.probes.base import Finding
from judgeprobe.probes.concatenation.bypass import BypassProbe
from judgeprobe.probes.concatenation.cluster import ClusterProbe
from judgeprobe.probes.concatenation.gating import power_notes
from judgeprobe.probes.concatenation.permutation import PermutationProbe
from judgeprobe.probes.concatenation.repetition import RepetitionProbe
from judgeprobe.probes.concatenation.sizing import items_for_power, question_size, sized_count
from judgeprobe.probes.decisions import DEPARTURE_THRESHOLD, FLIP_THRESHOLD
from judgeprobe.probes.registry import build_probe
from judgeprobe.stats import proportion


def test_the_question_size_tells_a_rate_at_the_fail_line_from_one_at_the_warn_line() -> None:
    n = question_size(FLIP_THRESHOLD)
    # at n, the 95% half-width around the fail line is half the distance to the warn line
    half = 1.959964 * math.sqrt(0.10 * 0.90 / n)
    assert half <= (0.10 - 0.05) / 2 < 1.959964 * math.sqrt(0.10 * 0.90 / (n - 1))
    assert question_size(DEPARTURE_THRESHOLD) < n


def test_a_sized_count_is_capped_by_what_the_items_carry() -> None:
    assert sized_count(FLIP_THRESHOLD, 40, 2) == 40  # 2 per item: 2 * 40 / 2
    assert sized_count(FLIP_THRESHOLD, 40, 8) == 10
    assert sized_count(FLIP_THRESHOLD, 10_000, 2) == question_size(FLIP_THRESHOLD)


def test_the_sized_defaults_start_with_the_short_concatenations() -> None:
    assert ClusterProbe().ks == (2, 4)
    assert ClusterProbe().per_cluster == 0
    assert PermutationProbe().ks == (4, 8)
    assert RepetitionProbe().counts == (1, 2, 4)
    assert BypassProbe().draws == 0


def test_the_paper_design_restores_every_size_left_at_its_default() -> None:
    cluster = ClusterProbe(design="paper")
    assert (cluster.ks, cluster.per_cluster) == ((2, 4, 8, 16), 1000)
    permutation = PermutationProbe(design="paper")
    assert (permutation.ks, permutation.n_tuples) == ((4, 8, 16), 1000)
    assert RepetitionProbe(design="paper").counts == (1, 2, 4, 8, 16)
    assert BypassProbe(design="paper").draws == 10
    # a size the user set is kept
    assert ClusterProbe(design="paper", ks=(2,)).ks == (2,)


def test_a_stored_probe_of_the_paper_defaults_is_rebuilt_as_it_was() -> None:
    """Stores written before sized designs hold the sizes explicitly: re-analysis rebuilds them."""
    stored = {"ks": [2, 4, 8, 16], "per_cluster": 1000, "quantile": 0.1}
    probe = build_probe(ClusterProbe, stored, where="probe 'cluster'")
    assert isinstance(probe, ClusterProbe)
    assert (probe.ks, probe.per_cluster, probe.design) == ((2, 4, 8, 16), 1000, "sized")


def test_an_unknown_design_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="design must be one of 'sized', 'paper'"):
        ClusterProbe(design="huge")  # type: ignore[arg-type]


def test_a_sized_cluster_draws_two_concatenations_per_item_at_most() -> None:
    probe = ClusterProbe()
    assert probe.wanted(40, 2) == 40
    assert probe.wanted(40, 4) == 20
    assert ClusterProbe(per_cluster=7).wanted(40, 2) == 7


def test_sized_bypass_draws_spread_the_question_over_the_flagged_items() -> None:
    probe = BypassProbe()
    # 20 flagged and 60 filler items at k = 2: 2 * 80 / 2 = 80 concatenations, 4 per item
    assert probe.draws_for(20, 80, 2) == 4
    assert probe.draws_for(2, 10_000, 2) == 10  # never more than the paper's 10
    assert BypassProbe(draws=3).draws_for(20, 80, 2) == 3


def test_the_items_for_power_grow_with_the_parts_a_unit_shares() -> None:
    """When failures follow items the effective sample is about items / k: a flip rate of 0.15
    (1.5 times its fail line) needs about 401 effective units for 80 % power, so 401 items
    alone and 802 at k = 2; a power of 0.9 needs more."""
    assert items_for_power(FLIP_THRESHOLD, 1) == 401
    assert items_for_power(FLIP_THRESHOLD, 2) == 2 * items_for_power(FLIP_THRESHOLD, 1)
    assert items_for_power(FLIP_THRESHOLD, 2, power=0.9) > items_for_power(FLIP_THRESHOLD, 2)
    # a departure rate's lines are twice as far apart: fewer items
    assert items_for_power(DEPARTURE_THRESHOLD, 2) < items_for_power(FLIP_THRESHOLD, 2)


def test_a_gated_rate_on_too_few_items_says_what_power_would_take() -> None:
    few = Finding("class_flip_excess", proportion(0, 40), "", {"k": "2"}, FLIP_THRESHOLD)
    (note,) = power_notes([few], 0.95)
    assert "k = 2" in note and "802 items" in note and "as few as 40" in note
    many = Finding("class_flip_excess", proportion(0, 900), "", {"k": "2"}, FLIP_THRESHOLD)
    assert power_notes([many], 0.95) == []
