"""Throughput of the transformers judge against a naive loop and transformers' ``pipeline``.

A random DeBERTa-v2 sequence classifier (hidden 256, 4 layers by default; no weights are
downloaded) scores the same (prompt, response) pairs of mixed lengths three ways:

- naive: one ``tokenizer(prompt, response)`` and one forward pass per input, under ``no_grad``;
- pipeline: ``pipeline("text-classification")`` with text pairs, at its default batch size (1)
  and batched (``--pipeline-batch``; it pads each batch to its longest input, unsorted);
- judge: :class:`~judgeprobe.judges.transformers_judge.TransformersJudge` through the engine (run
  store in memory): length-sorted, token-budgeted batches under ``inference_mode``.

Model loading is outside every timing; each way gets a short warm-up first, then the ways take
turns for ``--repeats`` rounds so that a drifting machine load hits them alike; medians are
printed, with ratios to the naive loop taken per round. Scores are checked to agree with the
naive loop. Run::

    python benchmarks/bench_batching.py --threads 1   # a few minutes on one CPU core
    python benchmarks/bench_batching.py --n 200 --repeats 1 --hidden 128 --layers 2   # quicker
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

Pair = tuple[str, str]


def build_model(folder: Path, *, hidden: int, layers: int, vocab_words: int, seed: int) -> None:
    """Save a random DeBERTa-v2 classifier and a word-level tokenizer into ``folder``."""
    import torch
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    words = " ".join(f"w{i}" for i in range(vocab_words))
    tokenizer.train_from_iterator([words], trainers.WordLevelTrainer(special_tokens=specials))
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        pad_token="[PAD]",
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        model_max_length=512,
    )
    config = transformers.DebertaV2Config(
        vocab_size=len(fast),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=max(1, hidden // 64),
        intermediate_size=4 * hidden,
        max_position_embeddings=512,
        type_vocab_size=2,
        num_labels=1,
        pad_token_id=fast.pad_token_id,
        relative_attention=True,
        position_buckets=256,
        pos_att_type=["p2c", "c2p"],
        position_biased_input=False,
    )
    torch.manual_seed(seed)
    transformers.DebertaV2ForSequenceClassification(config).save_pretrained(folder)
    fast.save_pretrained(folder)


def make_pairs(n: int, vocab_words: int, seed: int) -> list[Pair]:
    """Prompts of 5-40 words and responses of 5-440 words, log-uniform: mostly short, some long."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(vocab_words)])
    pairs = []
    for _ in range(n):
        prompt_len = int(rng.integers(5, 41))
        response_len = int(np.exp(rng.uniform(np.log(5), np.log(440))))
        pairs.append(
            (" ".join(rng.choice(vocab, prompt_len)), " ".join(rng.choice(vocab, response_len)))
        )
    return pairs


def timed(fn: Callable[[], list[float]]) -> tuple[float, list[float]]:
    started = time.perf_counter()
    scores = fn()
    return time.perf_counter() - started, scores


def naive_loop(tokenizer: Any, model: Any, pairs: Sequence[Pair]) -> list[float]:
    import torch

    scores = []
    with torch.no_grad():
        for prompt, response in pairs:
            encoded = tokenizer(prompt, response, return_tensors="pt")
            scores.append(float(model(**encoded).logits[0, 0]))
    return scores


def with_pipeline(classify: Any, pairs: Sequence[Pair], batch_size: int) -> list[float]:
    inputs = [{"text": prompt, "text_pair": response} for prompt, response in pairs]
    outputs = classify(inputs, batch_size=batch_size, function_to_apply="none", top_k=None)
    return [float(out[0]["score"]) for out in outputs]


def with_judge(
    folder: Path, pairs: Sequence[Pair], batch_size: int, budget: int | None
) -> Callable[[Sequence[Pair]], list[float]]:
    from judgeprobe.engine import Engine, EngineConfig, RunStore
    from judgeprobe.judges.transformers_judge import TransformersJudge, reward_model_rubric
    from judgeprobe.request import Request

    judge = TransformersJudge(folder, batch_size=batch_size, max_tokens_per_batch=budget).load()
    rubric = reward_model_rubric()

    def run(chunk: Sequence[Pair]) -> list[float]:
        engine = Engine(judge, RunStore(":memory:"), EngineConfig(progress=False))
        requests = [
            Request.make(judge.fingerprint, rubric, {"prompt": p, "response": r}) for p, r in chunk
        ]
        result = engine.run_sync(requests)
        return [float(result.verdicts[r.key].score or np.nan) for r in requests]

    return run


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=500, help="inputs (default 500)")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=64, help="the judge's batch size")
    parser.add_argument(
        "--tokens-per-batch", type=int, default=None, help="the judge's budget (default: its own)"
    )
    parser.add_argument("--pipeline-batch", type=int, default=8, help="the batched pipeline's size")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds (median kept)")
    parser.add_argument("--vocab", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)"
    )
    parser.add_argument("--skip-pipeline", action="store_true", help="leave the pipeline out")
    args = parser.parse_args(argv)

    import torch
    import transformers

    if args.threads is not None:
        torch.set_num_threads(args.threads)
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "random-deberta-v2"
        build_model(
            folder, hidden=args.hidden, layers=args.layers, vocab_words=args.vocab, seed=args.seed
        )
        pairs = make_pairs(args.n, args.vocab, args.seed)
        warm = pairs[:8]
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
        model = transformers.AutoModelForSequenceClassification.from_pretrained(
            folder, local_files_only=True
        ).eval()
        lengths = [len(tokenizer(p, r)["input_ids"]) for p, r in pairs]
        print(
            f"torch {torch.__version__}, transformers {transformers.__version__}, "
            f"{torch.get_num_threads()} thread(s), load average {os.getloadavg()[0]:.1f}; "
            f"DeBERTa-v2 hidden {args.hidden}, {args.layers} layers; {len(pairs)} inputs of "
            f"{min(lengths)}-{max(lengths)} tokens (median {int(np.median(lengths))}, "
            f"mean {np.mean(lengths):.0f})"
        )

        methods: dict[str, Callable[[Sequence[Pair]], list[float]]] = {
            "naive loop": lambda chunk: naive_loop(tokenizer, model, chunk)
        }
        if not args.skip_pipeline:
            classify = transformers.pipeline(
                "text-classification", model=model, tokenizer=tokenizer, device="cpu"
            )
            for size in (1, args.pipeline_batch):
                methods[f"pipeline (batch_size={size})"] = (
                    lambda chunk, size=size: with_pipeline(classify, chunk, size)  # type: ignore[misc]
                )
        methods["TransformersJudge"] = with_judge(
            folder, pairs, args.batch_size, args.tokens_per_batch
        )

        rates: dict[str, list[float]] = {name: [] for name in methods}
        ratios: dict[str, list[float]] = {name: [] for name in methods}
        scores: dict[str, list[float]] = {}
        for method in methods.values():
            method(warm)
        for _ in range(args.repeats):  # interleaved, so drifting machine load hits all alike
            round_rates = {}
            for name, method in methods.items():
                seconds, scores[name] = timed(lambda method=method: method(pairs))
                round_rates[name] = len(pairs) / seconds
                rates[name].append(round_rates[name])
            for name in methods:
                ratios[name].append(round_rates[name] / round_rates["naive loop"])

        reference = np.asarray(scores["naive loop"])
        print(f"{'method':<28}{'items/s':>10}{'x naive':>10}{'max |score diff|':>19}")
        for name in methods:
            diff = float(np.max(np.abs(np.asarray(scores[name]) - reference)))
            print(
                f"{name:<28}{np.median(rates[name]):>10.1f}{np.median(ratios[name]):>10.2f}"
                f"{diff:>19.2e}"
            )
        ours = np.asarray(rates["TransformersJudge"])
        for name in methods:
            if name.startswith("pipeline"):
                ratio = float(np.median(ours / np.asarray(rates[name])))
                print(f"TransformersJudge / {name}: {ratio:.2f}x")
        print(
            f"medians of {args.repeats} interleaved round(s); ratios are per round; load average "
            f"now {os.getloadavg()[0]:.1f}"
        )


if __name__ == "__main__":
    main()
