"""The rubric variant generator: an LLM rewrites a rubric once per transform class.

Any rubric can be rewritten, built-in or the user's own. The generator asks a language model
for each slot (``per_class`` variants per transform class; threshold slots alternate between a
stricter and a more lenient shift), validates every candidate
(:func:`~judgeprobe.rubrics.validation.validate_variant`) and, for the meaning-preserving classes,
optionally asks the model whether the rewrite is equivalent to the original. A rejected candidate
is kept with its reasons and the slot is retried with a new attempt number, up to ``attempts``
times. The prompts live in ``rubrics/generator_prompts.yaml`` (:class:`GeneratorPrompts`).

The model is any ``async complete(prompt) -> str``. :func:`engine_completion` makes one from a
judgeprobe :class:`~judgeprobe.engine.Engine`, e.g. around an
:class:`~judgeprobe.judges.openai_compat.OpenAIJudge`, so generation calls are cached in the run
store, retried and budgeted like judge calls::

    engine = Engine(OpenAIJudge(base_url, model, max_tokens=800), RunStore("gen.sqlite"))
    result = VariantGenerator(engine_completion(engine)).generate_sync(builtin_rubric("refusal"))
    Path("refusal.variants.yaml").write_text(result.variant_set().to_yaml())

Generated sets record the base rubric's hash, so they are refused for another wording.

The generator drives the engine, so it lives above it, beside response generation
(:mod:`judgeprobe.runs.responses`); :mod:`judgeprobe.rubrics` holds only what a rubric and its
variants are and how they are checked.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

import yaml

from judgeprobe.core.request import Request
from judgeprobe.engine import Engine, run_blocking
from judgeprobe.errors import RubricError
from judgeprobe.rubrics.rubric import Rubric
from judgeprobe.rubrics.validation import ValidationReport, decision_classes, validate_variant
from judgeprobe.rubrics.variants import (
    FAMILY,
    TRANSFORMS,
    Shift,
    TransformClass,
    Variant,
    VariantSet,
)

Complete = Callable[[str], Awaitable[str]]
"""An async function that sends one prompt to a language model and returns its text."""

_RUBRIC_BLOCK = re.compile(r"<rubric>\s*\n?(.*?)\s*</rubric>", re.DOTALL | re.IGNORECASE)
_SHIFTS: tuple[Shift, ...] = ("stricter", "more_lenient")


@dataclass(frozen=True, slots=True)
class GeneratorPrompts:
    """The generator's prompt templates (``$name`` placeholders, :class:`string.Template`)."""

    rewrite: str
    transforms: Mapping[str, str]
    scale_rule: str
    avoid: str
    equivalence: str
    version: str = "1"

    @classmethod
    def load(cls, path: str | Path | None = None) -> GeneratorPrompts:
        """Read prompts from ``path``, or the shipped ``generator_prompts.yaml``."""
        if path is None:
            text = (resources.files("judgeprobe.rubrics") / "generator_prompts.yaml").read_text(
                encoding="utf-8"
            )
            where = "generator_prompts.yaml"
        else:
            text = Path(path).read_text(encoding="utf-8")
            where = str(path)
        data = yaml.safe_load(text)
        try:
            return cls(
                rewrite=str(data["rewrite"]),
                transforms={str(k): str(v) for k, v in data["transforms"].items()},
                scale_rule=str(data.get("scale_rule", "")),
                avoid=str(data["avoid"]),
                equivalence=str(data["equivalence"]),
                version=str(data.get("version", "1")),
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise RubricError(
                f"{where}: generator prompts need 'rewrite', 'transforms', 'avoid' and "
                f"'equivalence' ({exc})"
            ) from exc


@dataclass(frozen=True, slots=True)
class Candidate:
    """One generated rewrite, its validation report and the model's raw answer."""

    variant: Variant
    report: ValidationReport
    raw: str

    @property
    def accepted(self) -> bool:
        return self.report.ok


@dataclass(frozen=True, slots=True)
class GenerationResult:
    """Every candidate the generator made for one base rubric, accepted or not."""

    base: Rubric
    candidates: tuple[Candidate, ...]

    @property
    def accepted(self) -> tuple[Variant, ...]:
        return tuple(c.variant for c in self.candidates if c.accepted)

    @property
    def rejected(self) -> tuple[Candidate, ...]:
        return tuple(c for c in self.candidates if not c.accepted)

    def variant_set(self) -> VariantSet:
        """The accepted variants as a set keyed to the base rubric's hash."""
        if not self.accepted:
            raise RubricError(
                f"no generated variant of {self.base.name!r} passed validation; reasons: "
                + "; ".join(
                    f"{c.variant.name}: {' '.join(c.report.reasons)}" for c in self.rejected
                )
            )
        return VariantSet(
            rubric=self.base.name,
            rubric_hash=self.base.hash,
            variants=self.accepted,
            description=f"generated variants of {self.base.name!r}",
        )


def parse_rewrite(text: str) -> str:
    """The rubric between ``<rubric>`` tags, or the whole answer when there are none."""
    match = _RUBRIC_BLOCK.search(text)
    body = match.group(1) if match else text
    return body.strip("\n").rstrip() + "\n"


class VariantGenerator:
    """Rewrites rubrics with a language model and validates every candidate.

    Parameters
    ----------
    complete : async callable
        ``await complete(prompt)`` returns the model's text.
    prompts : GeneratorPrompts, optional
        Defaults to the shipped ``generator_prompts.yaml``.
    per_class : int, default 2
        Variants wanted per transform class.
    attempts : int, default 3
        Tries per slot before it is given up (each rejected try is kept with its reasons).
    check_equivalence : bool, default True
        Ask the model whether meaning-preserving rewrites are equivalent to the original.
    keywords : sequence of str
        Extra words every variant must keep (see :func:`validate_variant`).
    """

    def __init__(
        self,
        complete: Complete,
        *,
        prompts: GeneratorPrompts | None = None,
        per_class: int = 2,
        attempts: int = 3,
        check_equivalence: bool = True,
        keywords: Sequence[str] = (),
    ) -> None:
        if per_class < 1 or attempts < 1:
            raise RubricError("per_class and attempts must be >= 1")
        self.complete = complete
        self.prompts = prompts or GeneratorPrompts.load()
        self.per_class = per_class
        self.attempts = attempts
        self.check_equivalence = check_equivalence
        self.keywords = tuple(keywords)

    async def generate(
        self, base: Rubric, transforms: Sequence[TransformClass] = TRANSFORMS
    ) -> GenerationResult:
        """Candidates for every slot of ``transforms``, in order."""
        if base.kind not in ("scale", "binary", "pairwise", "continuous"):
            raise RubricError(f"cannot make judging variants of a {base.kind} rubric")
        unknown = [t for t in transforms if t not in FAMILY]
        if unknown:
            raise RubricError(f"unknown transform class(es) {unknown}; choose from {TRANSFORMS}")
        candidates: list[Candidate] = []
        for transform in transforms:
            accepted: list[str] = []
            for slot in range(self.per_class):
                shift = _SHIFTS[slot % 2] if transform == "threshold" else None
                name = _name(transform, shift, slot)
                for attempt in range(1, self.attempts + 1):
                    candidate = await self._candidate(
                        base, transform, shift, name, attempt, accepted
                    )
                    candidates.append(candidate)
                    if candidate.accepted:
                        accepted.append(candidate.variant.template)
                        break
        return GenerationResult(base, tuple(candidates))

    def generate_sync(
        self, base: Rubric, transforms: Sequence[TransformClass] = TRANSFORMS
    ) -> GenerationResult:
        """:meth:`generate` for code without an event loop."""
        return run_blocking(self.generate(base, transforms))

    def rewrite_prompt(
        self,
        base: Rubric,
        transform: TransformClass,
        shift: Shift | None,
        attempt: int,
        previous: Sequence[str] = (),
    ) -> str:
        """The prompt asking for one rewrite of ``base``."""
        p = self.prompts
        avoid = ""
        if previous:
            avoid = Template(p.avoid).safe_substitute(
                previous="\n".join(f"<rubric>\n{t.strip()}\n</rubric>" for t in previous)
            )
        values = _rubric_terms(base)
        instruction = Template(p.transforms[_instruction_key(base, transform, shift)])
        scale_rule = p.scale_rule if base.kind == "scale" else ""
        return Template(p.rewrite).safe_substitute(
            instruction=instruction.safe_substitute(values),
            placeholders=", ".join(f"{{{name}}}" for name in base.inputs),
            labels=", ".join(base.labels) if base.labels else "(a number)",
            scale_rule=scale_rule,
            avoid=avoid,
            attempt=str(attempt),
            template=base.template.strip(),
        )

    async def _candidate(
        self,
        base: Rubric,
        transform: TransformClass,
        shift: Shift | None,
        name: str,
        attempt: int,
        previous: Sequence[str],
    ) -> Candidate:
        prompt = self.rewrite_prompt(base, transform, shift, attempt, previous)
        expected = expected_toward(base, shift) if shift is not None else ()
        try:
            raw = await self.complete(prompt)
        except Exception as exc:  # a failed call rejects this attempt, never the whole run
            return _failed(name, transform, shift, expected, f"generation failed: {exc}")
        variant = Variant(
            name=name,
            transform=transform,
            template=parse_rewrite(raw),
            shift=shift,
            expected_toward=expected,
            source="generated",
            description=f"generated, attempt {attempt}",
        )
        report = validate_variant(variant, base, keywords=self.keywords)
        if report.ok and self.check_equivalence and variant.family == "meaning_preserving":
            report = await check_equivalence(
                base, variant, self.complete, prompts=self.prompts, report=report
            )
        return Candidate(variant, report, raw)


async def check_equivalence(
    base: Rubric,
    variant: Variant,
    complete: Complete,
    *,
    prompts: GeneratorPrompts | None = None,
    report: ValidationReport | None = None,
) -> ValidationReport:
    """Ask a model whether ``variant`` means the same as ``base``; adds check ``equivalence``.

    The model must answer ``EQUIVALENT`` or ``DIFFERENT`` first; any other answer, or a failed
    call, fails the check (an unverified rewrite is not certified).
    """
    prompts = prompts or GeneratorPrompts.load()
    report = report or validate_variant(variant, base)
    prompt = Template(prompts.equivalence).safe_substitute(
        first=base.template.strip(), second=variant.template.strip()
    )
    try:
        answer = await complete(prompt)
    except Exception as exc:
        return report.with_check("equivalence", False, f"equivalence check failed: {exc}")
    first = answer.strip().split(maxsplit=1)[0].strip(" *.:,").upper() if answer.strip() else ""
    if first == "EQUIVALENT":
        return report.with_check("equivalence", True)
    if first == "DIFFERENT":
        why = answer.strip().split("\n", 1)[-1].strip() if "\n" in answer.strip() else ""
        return report.with_check(
            "equivalence", False, f"the equivalence check found a change of meaning: {why}".strip()
        )
    return report.with_check(
        "equivalence", False, f"the equivalence check gave no verdict: {answer.strip()[:80]!r}"
    )


def expected_toward(base: Rubric, shift: Shift) -> tuple[str, ...]:
    """Where flips under a threshold shift should land (see :mod:`judgeprobe.rubrics.variants`)."""
    if base.kind == "pairwise":
        return ("tie",) if shift == "stricter" else tuple(c for c in base.labels if c != "tie")
    classes = decision_classes(base)
    if len(classes) != 2:
        raise RubricError(f"rubric {base.name!r} has no decision rule to shift")
    positive, negative = classes
    return (positive,) if shift == "stricter" else (negative,)


def engine_completion(engine: Engine, *, max_new_tokens: int = 800) -> Complete:
    """A :data:`Complete` that sends prompts through ``engine`` as generation requests.

    Calls are cached in the engine's run store, retried and budgeted; a failed call raises
    :class:`RubricError` (the generator records it as a rejected attempt).
    """
    rubric = Rubric(
        name="variant-generator",
        kind="generation",
        template="{prompt}",
        inputs=("prompt",),
        max_new_tokens=max_new_tokens,
    )

    async def complete(prompt: str) -> str:
        request = Request.make(engine.judge.fingerprint, rubric, {"prompt": prompt})
        result = await engine.run([request], description="rubric variants")
        verdict = result.verdicts.get(request.key)
        if verdict is None or not verdict.ok:
            reason = "no answer" if verdict is None else (verdict.error or verdict.status.value)
            raise RubricError(f"the generator model failed: {reason}")
        return verdict.raw_text

    return complete


def _name(transform: TransformClass, shift: Shift | None, slot: int) -> str:
    if shift is None:
        return f"{transform}-{slot + 1}"
    return f"threshold-{shift.replace('_', '-')}-{slot // 2 + 1}"


def _instruction_key(base: Rubric, transform: TransformClass, shift: Shift | None) -> str:
    if shift is None:
        return transform
    return f"{'pairwise' if base.kind == 'pairwise' else 'threshold'}_{shift}"


def _rubric_terms(base: Rubric) -> dict[str, Any]:
    if base.kind == "pairwise" or base.decision is None:
        return {}
    rule = base.decision
    positive = [
        label for label in base.labels if base.decide(base.value_of(label)) == rule.positive
    ]
    return {
        "positive": rule.positive,
        "negative": rule.negative,
        "positive_labels": " or ".join(positive) if positive else "a high score",
    }


def _failed(
    name: str, transform: TransformClass, shift: Shift | None, expected: tuple[str, ...], why: str
) -> Candidate:
    # A placeholder variant so the failed attempt is reported like any rejected candidate.
    variant = Variant(
        name=name,
        transform=transform,
        template=f"(no rewrite: {why})",
        shift=shift,
        expected_toward=expected,
        source="generated",
    )
    report = ValidationReport(variant.name, variant.hash, transform, {"generated": False}, (why,))
    return Candidate(variant, report, "")
