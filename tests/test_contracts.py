"""Contracts that hold across the package.

Every probe checks its interval options in the same words; the public API is what these tests
list, no more and no less; every exception class judgeprobe defines is in the tree drawn in
``judgeprobe/errors.py``.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import pytest

import judgeprobe
import judgeprobe.compare
import judgeprobe.errors
import judgeprobe.judges
import judgeprobe.probes
from judgeprobe.errors import ConfigError, JudgeprobeError
from judgeprobe.probes.registry import build_probe, get_probe_class, probe_names
from judgeprobe.stats import InvalidParameterError

# -- probe parameters ----------------------------------------------------------------------------
INTERVAL_OPTIONS: dict[str, tuple[str, ...]] = {
    "agreement": ("confidence_level", "n_resamples"),
    "authority": ("confidence_level",),
    "authority_pairwise": ("confidence_level",),
    "bandwagon": ("confidence_level",),
    "bandwagon_pairwise": ("confidence_level",),
    "bypass": ("confidence_level", "n_resamples"),
    "cluster": ("confidence_level", "n_resamples"),
    "distraction": ("confidence_level",),
    "distraction_pairwise": ("confidence_level",),
    "forged_verdict": ("confidence_level",),
    "forged_verdict_pairwise": ("confidence_level",),
    "human_agreement": ("confidence_level", "n_resamples"),
    "injection": ("confidence_level",),
    "injection_pairwise": ("confidence_level",),
    "length_controlled_win_rate": ("confidence_level", "n_resamples"),
    "length_null": ("confidence_level", "n_resamples"),
    "master_key": ("confidence_level",),
    "master_key_pairwise": ("confidence_level",),
    "permutation": ("confidence_level", "n_resamples"),
    "policy_invariance": ("confidence_level", "n_resamples"),
    "policy_invariance_pairwise": ("confidence_level", "n_resamples"),
    "position": ("confidence_level",),
    "repetition": ("confidence_level", "n_resamples"),
    "verbosity": ("confidence_level",),
    "verbosity_pairwise": ("confidence_level",),
    "self_preference": ("confidence_level", "n_resamples"),
    "sensitivity": ("confidence_level", "n_resamples"),
    "sensitivity_pairwise": ("confidence_level",),
    "smuggling": ("confidence_level",),
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


# -- the public API ------------------------------------------------------------------------------
PROBE_CLASSES = [
    "AuthorityProbe",
    "BandwagonProbe",
    "DistractionProbe",
    "InjectionProbe",
    "PairwiseAuthorityProbe",
    "PairwiseBandwagonProbe",
    "PairwiseDistractionProbe",
    "PairwiseInjectionProbe",
    "PairwiseVerbosityProbe",
    "VerbosityProbe",
    "AgreementProbe",
    "BypassProbe",
    "ClusterProbe",
    "HumanAgreementProbe",
    "LengthControlledWinRateProbe",
    "LengthNullProbe",
    "PairwisePolicyInvarianceProbe",
    "PermutationProbe",
    "PolicyInvarianceProbe",
    "PositionProbe",
    "RepetitionProbe",
    "SelfPreferenceProbe",
    "PairwiseSensitivityProbe",
    "SensitivityProbe",
    "ForgedVerdictProbe",
    "MasterKeyProbe",
    "PairwiseForgedVerdictProbe",
    "PairwiseMasterKeyProbe",
    "SmugglingProbe",
]
PUBLIC_API: dict[ModuleType, list[str]] = {
    judgeprobe: [
        "AuditConfig",
        "Bill",
        "Budget",
        "CallableJudge",
        "Engine",
        "EngineConfig",
        "Estimate",
        "Finding",
        "Judge",
        "JudgeprobeError",
        "PairwiseItem",
        "Plan",
        "PointwiseItem",
        "ProbeContext",
        "ProbeResult",
        "RepairOutcome",
        "Request",
        "Rubric",
        "RunStore",
        "Verdict",
        "VerdictStatus",
        "Verdicts",
        "__version__",
        "analyze_offline",
        "build_card",
        "builtin_rubric",
        "compare_runs",
        "get_rubric",
        "plan_audit",
        "reanalyze",
        "run_audit",
        "run_probe",
        "run_probe_async",
        "run_probe_sync",
        "run_repair_audit",
        *PROBE_CLASSES,
    ],
    judgeprobe.probes: [
        "FigureSpec",
        "Finding",
        "Plan",
        "Probe",
        "ProbeContext",
        "ProbeKind",
        "ProbeResult",
        "Threshold",
        "Verdicts",
        "get_probe_class",
        "probe_names",
        "register_probe",
        *PROBE_CLASSES,
    ],
    judgeprobe.compare: [
        "COMPARE_VERSION",
        "WORDS",
        "ComparisonValidationError",
        "compare_runs",
        "compare_schema",
        "exit_code",
        "validate_comparison",
        "write_comparison",
    ],
    judgeprobe.judges: [
        "BaseJudge",
        "CallableJudge",
        "InProcessJudge",
        "Judge",
        "JudgeCapabilities",
        "build_judge",
        "label_score",
        "parse_label",
        "verdict_from_distribution",
        "verdict_from_text",
    ],
}


@pytest.mark.parametrize("module", list(PUBLIC_API), ids=lambda m: m.__name__)
def test_the_public_api_is_exactly_what_is_listed_and_every_name_resolves(
    module: ModuleType,
) -> None:
    assert sorted(module.__all__) == sorted(PUBLIC_API[module])
    assert len(set(module.__all__)) == len(module.__all__)
    star: dict[str, object] = {}
    exec(f"from {module.__name__} import *", star)  # what `import *` gives a user
    assert set(star) - {"__builtins__"} == set(module.__all__)


def test_every_registered_probe_class_is_exported_from_judgeprobe_and_judgeprobe_probes() -> None:
    registered = {get_probe_class(name) for name in probe_names()}
    for module in (judgeprobe, judgeprobe.probes):
        exported = {getattr(module, name) for name in PROBE_CLASSES}
        assert exported == registered, module.__name__


def test_the_top_level_names_are_the_objects_of_the_modules_that_define_them() -> None:
    from judgeprobe.audit.config import AuditConfig
    from judgeprobe.audit.repair import RepairOutcome, run_repair_audit
    from judgeprobe.audit.run import run_audit
    from judgeprobe.probes.base import Finding
    from judgeprobe.report.card import build_card
    from judgeprobe.stats.result import Estimate

    assert judgeprobe.run_audit is run_audit and judgeprobe.AuditConfig is AuditConfig
    assert judgeprobe.run_repair_audit is run_repair_audit
    assert judgeprobe.RepairOutcome is RepairOutcome
    assert judgeprobe.build_card is build_card
    assert judgeprobe.Finding is Finding and judgeprobe.Estimate is Estimate


# -- the exception tree --------------------------------------------------------------------------
SOURCE = Path(judgeprobe.__file__).parent
TREE_LINE = re.compile(r"^(?P<indent>(?:[│ ] {3})*)(?:[├└]── )?(?P<name>[A-Z]\w*)(?:\s|$)")


def _drawn_tree() -> dict[str, str | None]:
    """Each class in the tree of ``judgeprobe/errors.py``'s docstring, with its parent."""
    doc = judgeprobe.errors.__doc__ or ""
    lines = doc.split("::", 1)[1].split("\n\n", 2)[1].splitlines()
    parents: dict[str, str | None] = {}
    stack: list[str] = []
    for line in lines:
        match = TREE_LINE.match(line.removeprefix("    "))
        if match is None or ("──" not in line and stack):
            continue  # a description's continuation line
        depth = len(match["indent"]) // 4 + (1 if "──" in line else 0)
        del stack[depth:]
        parents[match["name"]] = stack[-1] if stack else None
        stack.append(match["name"])
    return parents


def _exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined at the top level of a judgeprobe module, by name (warning
    categories, which are issued rather than raised, are not in the tree)."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages([str(SOURCE)], "judgeprobe."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and not issubclass(value, Warning)
                and value.__module__ == module.__name__
            ):
                assert value.__name__ not in found, f"two exception classes {value.__name__}"
                found[value.__name__] = value
    return found


def test_the_drawn_tree_is_read_as_drawn() -> None:
    tree = _drawn_tree()
    assert tree["JudgeprobeError"] is None
    assert tree["ConfigError"] == "JudgeprobeError"
    assert tree["FatalJudgeError"] == "JudgeError"
    assert "annotation" not in tree and "the" not in tree  # continuation lines are not classes


def test_every_exception_class_subclasses_the_tree_and_sits_where_it_is_drawn() -> None:
    classes = _exception_classes()
    tree = _drawn_tree()
    assert set(classes) == set(tree), "exception classes and the tree in errors.py differ"
    for name, cls in classes.items():
        assert issubclass(cls, JudgeprobeError), name
        judgeprobe_bases = [b.__name__ for b in cls.__bases__ if issubclass(b, JudgeprobeError)]
        assert judgeprobe_bases == ([tree[name]] if tree[name] else []), name


def test_no_exception_class_is_defined_out_of_reach_inside_a_function_or_class() -> None:
    top_level = set(_exception_classes())
    for path in sorted(SOURCE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_level = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name not in module_level:
                bases = {ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases}
                looks_like = any(b.endswith(("Error", "Exception")) for b in bases)
                assert not looks_like, f"{path.name}: nested exception class {node.name}"
    assert "RowError" in top_level and "Mismatch" in top_level
