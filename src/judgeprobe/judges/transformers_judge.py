"""Sequence-classification models as judges, through Hugging Face transformers (optional extra).

Two kinds of model fit: reward models that score a (prompt, response) pair, such as OpenAssistant's
DeBERTa and Pythia reward models, and text classifiers that score one text (toxicity, refusal). The
score is one output of the classification head: the raw logit (a reward), or a sigmoid or softmax
probability (a classifier). Which way is "worse" is not the judge's business: the rubric's decision
rule says it (the built-in ``reward`` rubric: higher is safer, unsafe at or below 0; ``toxicity``:
higher is worse), so probes count decision flips the right way round.

How an input is formed follows the rubric. A rubric with two inputs (``prompt``, ``response``) is
fed as a tokenizer text pair, the way the OpenAssistant DeBERTa reward models were trained; any
other rubric (or ``pair_inputs=False``) is fed as its rendered template, e.g. the Pythia reward
models' ``<|prompter|>...<|endoftext|><|assistant|>...<|endoftext|>`` chat format.

The context window is the smaller of the model's position embeddings and the tokenizer's maximum
length (or an explicit ``context_window``). Longer inputs are skipped by the engine and counted,
never truncated: this is the natural limit on the number of concatenations a probe can make.

The engine hands the judge up to ``batch_size`` requests at a time. The judge sorts them by token
length, packs them into sub-batches whose padded size (rows x longest) stays under
``max_tokens_per_batch``, runs them without autograd on the judge's model thread, and returns the
verdicts in the order it was given.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from judgeprobe._util.hashing import content_hash
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.errors import ConfigError
from judgeprobe.judges.base import InProcessJudge
from judgeprobe.judges.transformers_loading import (
    config_dtype,
    ensure_pad_token,
    folder_hash,
    from_pretrained,
    import_torch,
    import_transformers,
    transformers_at_least,
)
from judgeprobe.rubrics import DecisionRule, Rubric, builtin_rubric

ScoreMode = Literal["logit", "sigmoid", "softmax"]
"""``logit``: the chosen output as it is (reward models); ``sigmoid``: its probability under a
sigmoid (single-output or multi-label classifiers); ``softmax``: the chosen class's probability
under a softmax over all outputs (multi-class classifiers)."""

OASST_PYTHIA_TEMPLATE = "<|prompter|>{prompt}<|endoftext|><|assistant|>{response}<|endoftext|>"
"""The chat format OpenAssistant's Pythia reward models read (use with ``pair_inputs=False``)."""

_DTYPES = ("float32", "float16", "bfloat16")
_SCORE_MODES = ("logit", "sigmoid", "softmax")
_UNBOUNDED_LENGTH = 1_000_000
"""Tokenizers without a limit report a huge ``model_max_length`` (``int(1e30)``)."""
_LENGTH_CACHE_SIZE = 200_000
_COUNT_BATCH = 512
_CPU_TOKENS_PER_BATCH = 1024
_GPU_TOKENS_PER_BATCH = 8192

_import_transformers = import_transformers
_import_torch = import_torch
"""The loading functions under their private names, for code that imports them from here."""


def reward_model_rubric(threshold: float = 0.0, *, template: str | None = None) -> Rubric:
    """The built-in ``reward`` rubric with another decision threshold or input template.

    A reward at or below ``threshold`` is unsafe, above it safe (higher is safer). ``template``
    replaces the rubric's template, e.g. :data:`OASST_PYTHIA_TEMPLATE` for a judge built with
    ``pair_inputs=False``.

    Examples
    --------
    >>> rubric = reward_model_rubric(-1.0)
    >>> rubric.decide(-1.5), rubric.decide(0.5)
    ('unsafe', 'safe')
    """
    base = builtin_rubric("reward")
    decision = DecisionRule(
        positive="unsafe",
        negative="safe",
        positive_at=threshold,
        negative_at=threshold,
        higher_is_positive=False,
    )
    return base.with_template(template or base.template, decision=decision)


def pack_batches(lengths: Sequence[int], *, max_tokens: int, max_rows: int) -> list[list[int]]:
    """Indices of ``lengths`` grouped into batches, shortest first, under a padded-token budget.

    Each batch holds at most ``max_rows`` inputs and, padded to its longest input, at most
    ``max_tokens`` tokens; an input longer than ``max_tokens`` gets a batch of its own.

    Examples
    --------
    >>> pack_batches([5, 1, 3, 2], max_tokens=6, max_rows=8)
    [[1, 3], [2], [0]]
    """
    if max_tokens < 1 or max_rows < 1:
        raise ConfigError("max_tokens and max_rows must be >= 1")
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        rows = len(current) + 1
        if current and (rows > max_rows or rows * lengths[index] > max_tokens):
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


class TransformersJudge(InProcessJudge):
    """A Hugging Face sequence-classification model (reward model or classifier) as a judge.

    Parameters
    ----------
    model : a Hub model id (``"OpenAssistant/reward-model-deberta-v3-large-v2"``) or a local
        folder written by ``save_pretrained`` (model and tokenizer together).
    device : ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ...; default CUDA when available, else CPU.
    dtype : ``"float32"``, ``"float16"`` or ``"bfloat16"``; default float32 on CPU and the
        checkpoint's own dtype on a GPU (float32 when the checkpoint is float32). Part of the
        fingerprint: half precision can move a score across a threshold.
    max_tokens_per_batch : the most padded tokens (rows x longest input) one forward pass takes;
        default 8192 on a GPU and 1024 on CPU, where larger batches ran slower per input on the
        benchmark machine (the allocator pages fresh memory in for every large batch; see
        ``docs/transformers.md``).
    batch_size : how many requests the engine hands over per call.
    label_index : the classification output that is the score: an index, or a label name of the
        model's ``id2label`` (e.g. ``"toxic"``).
    score : how the output becomes the score (see :data:`ScoreMode`).
    pair_inputs : feed a two-input rubric as a tokenizer text pair (reward models such as
        OpenAssistant's DeBERTa); False feeds the rendered template instead.
    revision : the Hub revision (branch, tag or commit) to load; pin a commit for reproducible
        audits. A local folder is identified by a hash of its files instead.
    context_window : override the window read from the model and tokenizer (e.g. 1024 to follow
        a paper's setting); longer inputs are skipped, never truncated.
    local_files_only : never reach the Hub; default True for a local folder, else False.

    Notes
    -----
    The fingerprint (which keys the verdict cache) covers the model and its revision or file hash,
    the dtype, the chosen output and score mode, how inputs are formed and the context window. It
    leaves out the device: the same weights in the same dtype give the same scores on CPU and GPU
    up to floating-point tolerance.

    Examples
    --------
    >>> name = "OpenAssistant/reward-model-deberta-v3-large-v2"
    >>> judge = TransformersJudge(name, context_window=512)  # doctest: +SKIP
    >>> rubric = reward_model_rubric()  # higher reward is safer
    >>> rubric.decide(-2.0)
    'unsafe'
    """

    backend = "transformers"
    max_concurrency = 1

    def __init__(
        self,
        model: str | os.PathLike[str],
        *,
        device: str | None = None,
        dtype: str | None = None,
        max_tokens_per_batch: int | None = None,
        batch_size: int = 64,
        label_index: int | str = 0,
        score: ScoreMode = "logit",
        pair_inputs: bool = True,
        revision: str | None = None,
        context_window: int | None = None,
        local_files_only: bool | None = None,
    ) -> None:
        if dtype is not None and dtype not in (*_DTYPES, "auto"):
            raise ConfigError(f"dtype must be one of {', '.join(_DTYPES)} (or None for automatic)")
        if score not in _SCORE_MODES:
            raise ConfigError(f"score must be one of {', '.join(_SCORE_MODES)}, not {score!r}")
        if (max_tokens_per_batch is not None and max_tokens_per_batch < 1) or batch_size < 1:
            raise ConfigError("max_tokens_per_batch and batch_size must be >= 1")
        if context_window is not None and context_window < 1:
            raise ConfigError("context_window must be >= 1 (or None to read it from the model)")
        if isinstance(label_index, int) and label_index < 0:
            raise ConfigError("label_index must be >= 0 or a label name")
        self.model_ref = os.fspath(model)
        self._local = Path(self.model_ref).is_dir()
        self.local_files_only = self._local if local_files_only is None else local_files_only
        self.revision = revision
        self.requested_device = device
        self.requested_dtype = None if dtype == "auto" else dtype
        self.requested_tokens_per_batch = max_tokens_per_batch
        self.batch_size = batch_size
        self.label_index = label_index
        self.score = score
        self.pair_inputs = pair_inputs
        self._window_override = context_window
        self._config: Any = None
        self._tokenizer: Any = None
        self._model: Any = None
        self._device: str | None = None
        self._dtype: str | None = None
        self._resolved_revision: str | None = None
        self._label: int | None = None
        self._batchable = True
        self._forward_args: frozenset[str] = frozenset()
        self._lengths: OrderedDict[str, int] = OrderedDict()
        self._tokenizer_lock = threading.Lock()
        self._model_lock = threading.Lock()
        self._load_lock = threading.RLock()

    # -- identity -----------------------------------------------------------------------------
    @property
    def model_name(self) -> str:
        """The Hub id, or a local folder's name (never its full path)."""
        return Path(self.model_ref).name if self._local else self.model_ref

    def describe(self) -> dict[str, Any]:
        config = self.config
        return {
            "backend": self.backend,
            "model": self.model_name,
            "revision": self.resolved_revision,
            "architecture": (getattr(config, "architectures", None) or [type(config).__name__])[0],
            "dtype": self.dtype,
            "label_index": self.label,
            "label_name": self.label_name,
            "score": self.score,
            "inputs": "text pair for two-input rubrics" if self.pair_inputs else "template",
            "context_window": self.context_window,
            "device": self.device,
        }

    @property
    def fingerprint(self) -> str:
        return content_hash({k: v for k, v in self.describe().items() if k != "device"})

    @property
    def resolved_revision(self) -> str:
        """The revision asked for, the cached commit, or a hash of a local folder's files."""
        if self._resolved_revision is None:
            if self._local:
                self._resolved_revision = "files:" + folder_hash(Path(self.model_ref))
            else:
                commit = getattr(self.config, "_commit_hash", None)
                self._resolved_revision = self.revision or commit or "unpinned"
        return self._resolved_revision

    # -- loading ------------------------------------------------------------------------------
    @property
    def config(self) -> Any:
        """The model's configuration (loaded on first use; no weights)."""
        if self._config is None:
            with self._load_lock:
                if self._config is None:
                    transformers = import_transformers()
                    self._config = self._from_pretrained(transformers.AutoConfig)
                    self._label = self._resolve_label(self._config)
        return self._config

    @property
    def tokenizer(self) -> Any:
        """The tokenizer (loaded on first use), padding on the right."""
        if self._tokenizer is None:
            with self._load_lock:
                if self._tokenizer is None:
                    transformers = import_transformers()
                    tokenizer = self._from_pretrained(transformers.AutoTokenizer)
                    self._batchable = ensure_pad_token(tokenizer, self.config)
                    tokenizer.padding_side = "right"
                    self._tokenizer = tokenizer
        return self._tokenizer

    @property
    def model(self) -> Any:
        """The model in evaluation mode on its device and dtype (loaded on first use)."""
        if self._model is None:
            with self._load_lock:
                if self._model is None:
                    self._model = self._load_model()
        return self._model

    def load(self) -> TransformersJudge:
        """Load tokenizer and weights now rather than on the first request; returns the judge."""
        _ = self.model
        return self

    def _load_model(self) -> Any:
        import inspect

        torch = import_torch()
        transformers = import_transformers()
        tokenizer = self.tokenizer
        dtype_kwarg = "dtype" if transformers_at_least(transformers, 4, 56) else "torch_dtype"
        model = self._from_pretrained(
            transformers.AutoModelForSequenceClassification,
            **{dtype_kwarg: getattr(torch, self.dtype)},
        )
        if (
            getattr(model.config, "pad_token_id", None) is None
            and tokenizer.pad_token_id is not None
        ):
            model.config.pad_token_id = tokenizer.pad_token_id
        num_labels = int(model.config.num_labels)
        if self.label >= num_labels:
            raise ConfigError(
                f"label_index {self.label} is out of range: {self.model_name!r} has {num_labels} "
                "output(s)"
            )
        if self.score == "softmax" and num_labels < 2:
            raise ConfigError(
                "score='softmax' needs a model with at least two outputs; use 'sigmoid'"
            )
        model.to(self.device)
        model.eval()
        self._forward_args = frozenset(inspect.signature(model.forward).parameters)
        return model

    def _from_pretrained(self, factory: Any, **kwargs: Any) -> Any:
        return from_pretrained(
            factory,
            self.model_ref,
            name=self.model_name,
            revision=self.revision,
            local_files_only=self.local_files_only,
            **kwargs,
        )

    def _resolve_label(self, config: Any) -> int:
        if isinstance(self.label_index, int):
            return self.label_index
        label2id = {str(k): int(v) for k, v in (getattr(config, "label2id", None) or {}).items()}
        if self.label_index not in label2id:
            raise ConfigError(
                f"{self.model_name!r} has no output label {self.label_index!r}; its labels are "
                f"{', '.join(sorted(label2id)) or 'unnamed'}"
            )
        return label2id[self.label_index]

    @property
    def label(self) -> int:
        """The index of the output that is the score."""
        _ = self.config
        assert self._label is not None
        return self._label

    @property
    def label_name(self) -> str:
        id2label = getattr(self.config, "id2label", None) or {}
        return str(id2label.get(self.label, id2label.get(str(self.label), self.label)))

    @property
    def device(self) -> str:
        """The torch device the model runs on."""
        if self._device is None:
            if self.requested_device is not None:
                self._device = self.requested_device
            else:
                self._device = "cuda" if import_torch().cuda.is_available() else "cpu"
        return self._device

    @property
    def dtype(self) -> str:
        """float32 on CPU; on a GPU the checkpoint's dtype unless one was asked for."""
        if self._dtype is None:
            if self.requested_dtype is not None:
                self._dtype = self.requested_dtype
            elif self.device == "cpu":
                self._dtype = "float32"
            else:
                stored = str(config_dtype(self.config) or "float32").removeprefix("torch.")
                self._dtype = stored if stored in _DTYPES else "float32"
        return self._dtype

    @property
    def max_tokens_per_batch(self) -> int:
        """The padded-token budget of one forward pass."""
        if self.requested_tokens_per_batch is not None:
            return self.requested_tokens_per_batch
        return _CPU_TOKENS_PER_BATCH if self.device == "cpu" else _GPU_TOKENS_PER_BATCH

    # -- context window and token counts ------------------------------------------------------
    @property
    def context_window(self) -> int | None:
        """Input tokens the model can read: an explicit override, else min(model, tokenizer)."""
        if self._window_override is not None:
            return self._window_override
        limits = []
        positions = getattr(self.config, "max_position_embeddings", None)
        if isinstance(positions, int) and positions > 0:
            limits.append(positions)
        tokenizer_max = getattr(self.tokenizer, "model_max_length", None)
        if isinstance(tokenizer_max, int) and 0 < tokenizer_max < _UNBOUNDED_LENGTH:
            limits.append(tokenizer_max)
        return min(limits) if limits else None

    @context_window.setter
    def context_window(self, value: int | None) -> None:
        self._window_override = value

    def model_inputs(self, request: Request) -> tuple[str, str | None]:
        """The text (and text pair) the tokenizer gets for ``request``."""
        rubric = request.rubric
        if self.pair_inputs and len(rubric.inputs) == 2:
            fields = request.field_map
            return fields[rubric.inputs[0]], fields[rubric.inputs[1]]
        return request.render(), None

    def count_tokens(self, request: Request) -> int | None:
        """Tokens of the model input, special tokens included, exactly as it will be run."""
        return self.count_tokens_many([request])[0]

    def count_tokens_many(self, requests: Sequence[Request]) -> list[int | None]:
        """:meth:`count_tokens` of each request, tokenizing the uncached ones in batches.

        A fast tokenizer encodes a batch on every core: the engine counts every request against
        the context window before judging, and a concatenation probe's requests are long.
        """
        counts: dict[str, int] = {}
        uncached: list[Request] = []
        for request in requests:
            cached = self._lengths.get(request.key)
            if cached is None:
                uncached.append(request)
            else:
                counts[request.key] = cached
        for start in range(0, len(uncached), _COUNT_BATCH):
            for request, length in self._measure(uncached[start : start + _COUNT_BATCH]):
                counts[request.key] = length
                self._lengths[request.key] = length
                if len(self._lengths) > _LENGTH_CACHE_SIZE:
                    self._lengths.popitem(last=False)
        return [counts[request.key] for request in requests]

    def _measure(self, requests: Sequence[Request]) -> list[tuple[Request, int]]:
        """Each request with its token count; texts and text pairs are encoded apart."""
        inputs = [(request, *self.model_inputs(request)) for request in requests]
        measured: list[tuple[Request, int]] = []
        for paired in (False, True):
            group = [entry for entry in inputs if (entry[2] is not None) == paired]
            if not group:
                continue
            texts = [text for _, text, _ in group]
            pairs = [pair for _, _, pair in group] if paired else None
            tokenizer = self.tokenizer
            with self._tokenizer_lock:
                encoded = tokenizer(texts, pairs, truncation=False, verbose=False)
            measured.extend(
                (request, len(ids))
                for (request, _, _), ids in zip(group, encoded["input_ids"], strict=True)
            )
        return measured

    # -- judging ------------------------------------------------------------------------------
    async def judge(self, request: Request) -> Verdict:
        return (await self.judge_batch([request]))[0]

    async def judge_batch(self, requests: Sequence[Request]) -> list[Verdict]:
        return await self.run_in_model_thread(self.judge_batch_sync, list(requests))

    def judge_batch_sync(self, requests: Sequence[Request]) -> list[Verdict]:
        """Score ``requests`` in token-budgeted sub-batches; verdicts in the order given."""
        verdicts: list[Verdict | None] = [None] * len(requests)
        runnable: dict[bool, list[int]] = {False: [], True: []}
        window = self.context_window
        lengths = [length or 0 for length in self.count_tokens_many(requests)]
        for index, (request, length) in enumerate(zip(requests, lengths, strict=True)):
            if request.rubric.kind != "continuous":
                verdicts[index] = Verdict.failed(
                    f"a transformers judge gives continuous scores; rubric {request.rubric.name!r} "
                    f"is a {request.rubric.kind} rubric (use e.g. builtin 'reward' or 'toxicity')"
                )
            elif window is not None and length > window:
                verdicts[index] = Verdict.skipped(
                    f"input of {length} tokens exceeds the context window of {window}",
                    prompt_tokens=length,
                )
            else:
                runnable[self.model_inputs(request)[1] is not None].append(index)
        rows = self.batch_size if self._batchable else 1
        for group in runnable.values():
            packed = pack_batches(
                [lengths[i] for i in group], max_tokens=self.max_tokens_per_batch, max_rows=rows
            )
            for batch in packed:
                indices = [group[i] for i in batch]
                scored = self._run([requests[i] for i in indices], [lengths[i] for i in indices])
                for index, verdict in zip(indices, scored, strict=True):
                    verdicts[index] = verdict
        done = [v for v in verdicts if v is not None]
        assert len(done) == len(requests), "every request gets a verdict"
        return done

    def _run(self, requests: Sequence[Request], lengths: Sequence[int]) -> list[Verdict]:
        """One forward pass; a batch that runs out of GPU memory is split in halves."""
        torch = import_torch()
        try:
            started = time.perf_counter()
            logits = self._forward(requests)
            latency = (time.perf_counter() - started) / len(requests)
        except torch.cuda.OutOfMemoryError as exc:
            if len(requests) == 1:
                return [
                    Verdict.failed(f"out of GPU memory on one input of {lengths[0]} tokens: {exc}")
                ]
            half = len(requests) // 2
            return self._run(requests[:half], lengths[:half]) + self._run(
                requests[half:], lengths[half:]
            )
        return [
            self._verdict(row, length, latency) for row, length in zip(logits, lengths, strict=True)
        ]

    def _forward(self, requests: Sequence[Request]) -> list[list[float]]:
        torch = import_torch()
        model = self.model
        inputs = [self.model_inputs(r) for r in requests]
        texts = [text for text, _ in inputs]
        pairs = [pair for _, pair in inputs]
        with self._tokenizer_lock:
            encoded = self.tokenizer(
                texts,
                None if pairs[0] is None else pairs,
                padding=len(texts) > 1,
                truncation=False,
                return_tensors="pt",
                verbose=False,
            )
        feed = {k: v.to(self.device) for k, v in encoded.items() if k in self._forward_args}
        with self._model_lock, torch.inference_mode():
            logits = model(**feed).logits
        rows: list[list[float]] = logits.float().cpu().tolist()
        return rows

    def _verdict(self, logits: list[float], length: int, latency: float) -> Verdict:
        if not all(math.isfinite(x) for x in logits):
            return Verdict.failed(
                f"the model returned a non-finite output {logits}; try dtype='float32'",
                prompt_tokens=length,
            )
        chosen = logits[self.label]
        distribution: dict[str, float] | None = None
        if self.score == "logit":
            value = chosen
        elif self.score == "sigmoid":
            value = _sigmoid(chosen)
        else:
            probabilities = _softmax(logits)
            value = probabilities[self.label]
            id2label = getattr(self.config, "id2label", None) or {}
            distribution = {str(id2label.get(i, i)): p for i, p in enumerate(probabilities)}
        return Verdict.scored(
            value,
            raw_text=f"{value:.6g}",
            distribution=distribution,
            prompt_tokens=length,
            latency_s=latency,
            meta={"logits": logits},
        )


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def _softmax(values: Sequence[float]) -> list[float]:
    top = max(values)
    exps = [math.exp(v - top) for v in values]
    total = sum(exps)
    return [e / total for e in exps]
