"""Throughput of the transformers judge against a naive loop and transformers' ``pipeline``.

A random DeBERTa-v2 sequence classifier (hidden 256, 4 layers by default; no weights are
downloaded) scores the same (prompt, response) pairs of mixed lengths three ways:

- naive: one ``tokenizer(prompt, response)`` and one forward pass per input, under ``no_grad``;
- pipeline: ``pipeline("text-classification")`` with text pairs, at its default batch size (1)
  and at the judge's batch size (it pads each batch to its longest input, unsorted);
- judge: :class:`~judgeprobe.judges.transformers_judge.TransformersJudge` through the engine (run
  store in memory): length-sorted, token-budgeted batches under ``inference_mode``.

Model loading is outside every timing; each way gets a short warm-up first. Scores are checked to
agree with the naive loop. Run::

    python benchmarks/bench_batching.py            # about a minute on two CPU cores
    python benchmarks/bench_batching.py --n 200 --hidden 128 --layers 2   # quicker
"""

from __future__ import annotations

import argparse
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


def with_judge(folder: Path, pairs: Sequence[Pair], batch_size: int, budget: int) -> Any:
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500, help="inputs (default 500)")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--tokens-per-batch", type=int, default=8192)
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
            f"{torch.get_num_threads()} threads; DeBERTa-v2 hidden {args.hidden}, "
            f"{args.layers} layers; {len(pairs)} inputs of {min(lengths)}-{max(lengths)} tokens "
            f"(median {int(np.median(lengths))}, mean {np.mean(lengths):.0f})"
        )

        results: dict[str, tuple[float, list[float]]] = {}
        naive_loop(tokenizer, model, warm)
        results["naive loop"] = timed(lambda: naive_loop(tokenizer, model, pairs))
        if not args.skip_pipeline:
            classify = transformers.pipeline(
                "text-classification", model=model, tokenizer=tokenizer, device="cpu"
            )
            for size in (1, args.batch_size):
                with_pipeline(classify, warm, size)
                results[f"pipeline (batch_size={size})"] = timed(
                    lambda size=size: with_pipeline(classify, pairs, size)  # type: ignore[misc]
                )
        judge_run = with_judge(folder, pairs, args.batch_size, args.tokens_per_batch)
        judge_run(warm)
        results["TransformersJudge"] = timed(lambda: judge_run(pairs))

        reference = np.asarray(results["naive loop"][1])
        naive_rate = len(pairs) / results["naive loop"][0]
        print(f"{'method':<28}{'items/s':>10}{'x naive':>10}{'max |score diff|':>19}")
        for name, (seconds, scores) in results.items():
            rate = len(pairs) / seconds
            diff = float(np.max(np.abs(np.asarray(scores) - reference)))
            print(f"{name:<28}{rate:>10.1f}{rate / naive_rate:>10.2f}{diff:>19.2e}")
        ours = len(pairs) / results["TransformersJudge"][0]
        for name, (seconds, _) in results.items():
            if name.startswith("pipeline"):
                print(f"TransformersJudge / {name}: {ours / (len(pairs) / seconds):.2f}x")


if __name__ == "__main__":
    main()
