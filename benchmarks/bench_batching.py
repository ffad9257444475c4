"""Throughput of the transformers judge against a naive loop and transformers' ``pipeline``.

A random DeBERTa-v2 sequence classifier (hidden 256, 4 layers by default, relative attention as in
OpenAssistant's DeBERTa-v3 reward models; no weights are downloaded) scores the same (prompt,
response) pairs three ways:

- naive: one ``tokenizer(prompt, response)`` and one forward pass per input, under ``no_grad``;
- pipeline: ``pipeline("text-classification")`` with text pairs, at its default batch size (1)
  and batched (``--pipeline-batch``; it pads each batch to its longest input, unsorted);
- judge: :class:`~judgeprobe.judges.transformers_judge.TransformersJudge` through the engine (run
  store in memory): length-sorted, token-budgeted batches under ``inference_mode``.

The inputs are made-up pairs of log-uniform length (``--inputs synthetic``) or real (prompt,
response) pairs of hh-rlhf's harmless-base test split (``--inputs hh-rlhf``, read from ``--data``),
with a word-level tokenizer trained on them. A second table times the naive loop and the judge on
inputs of one length band at a time: what batching gains depends on the length.

Model loading is outside every timing; each way gets a short warm-up first, then the ways take
turns for ``--repeats`` rounds so that a drifting machine load hits them alike; medians are
printed, with ratios to the naive loop taken per round. Scores are checked to agree with the
naive loop. Run::

    python benchmarks/bench_batching.py --threads 2 --inputs hh-rlhf --data ../shared/data
    python benchmarks/bench_batching.py --n 200 --repeats 1 --band-size 0   # quicker
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

Pair = tuple[str, str]
Method = Callable[[Sequence[Pair]], list[float]]
CONTEXT_WINDOW = 512


def build_model(folder: Path, texts: Sequence[str], *, hidden: int, layers: int, seed: int) -> None:
    """Save a random DeBERTa-v2 classifier and a word-level tokenizer trained on ``texts``.

    The tokenizer splits words and punctuation, so an English text gets about as many tokens as
    a subword tokenizer would give it; the model has the structure of OpenAssistant's DeBERTa-v3
    reward models (relative attention over 256 position buckets), scaled down.
    """
    import torch
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    trainer = trainers.WordLevelTrainer(vocab_size=30_000, special_tokens=specials)
    tokenizer.train_from_iterator(texts, trainer)
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
        model_max_length=CONTEXT_WINDOW,
    )
    config = transformers.DebertaV2Config(
        vocab_size=len(fast),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=max(1, hidden // 64),
        intermediate_size=4 * hidden,
        max_position_embeddings=CONTEXT_WINDOW,
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


def synthetic_pairs(n: int, seed: int, vocab_words: int = 5000) -> list[Pair]:
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


def hh_rlhf_pairs(n: int, seed: int, root: Path) -> list[Pair]:
    """(prompt, response) pairs of Anthropic's hh-rlhf harmless-base test split, both responses.

    The dialogue a reward model such as OpenAssistant's DeBERTa was trained to score: ``n`` pairs
    drawn at random (seeded) from the file in ``root`` (``hh_rlhf/harmless-base/test.jsonl.gz``).
    """
    from judgeprobe.data import load_dataset

    items = load_dataset("hh-rlhf", root=root)
    pairs = [
        (item.prompt, response) for item in items for response in (item.response_a, item.response_b)
    ]
    rng = np.random.default_rng(seed)
    chosen = rng.choice(len(pairs), size=min(n, len(pairs)), replace=False)
    return [pairs[int(i)] for i in chosen]


def naive_loop(tokenizer: Any, model: Any, pairs: Sequence[Pair]) -> list[float]:
    import torch

    scores = []
    with torch.no_grad():
        for prompt, response in pairs:
            encoded = tokenizer(prompt, response, return_tensors="pt").to(model.device)
            scores.append(float(model(**encoded).logits[0, 0]))
    return scores


def with_pipeline(classify: Any, pairs: Sequence[Pair], batch_size: int) -> list[float]:
    inputs = [{"text": prompt, "text_pair": response} for prompt, response in pairs]
    outputs = classify(inputs, batch_size=batch_size, function_to_apply="none", top_k=None)
    return [float(out[0]["score"]) for out in outputs]


def with_judge(folder: Path, device: str, batch_size: int, budget: int | None) -> Method:
    from judgeprobe.core.request import Request
    from judgeprobe.engine import Engine, EngineConfig, RunStore
    from judgeprobe.judges.transformers_judge import TransformersJudge, reward_model_rubric

    judge = TransformersJudge(
        folder, device=device, batch_size=batch_size, max_tokens_per_batch=budget
    )
    rubric = reward_model_rubric()

    def run(chunk: Sequence[Pair]) -> list[float]:
        engine = Engine(judge, RunStore(":memory:"), EngineConfig(progress=False))
        requests = [
            Request.make(judge.fingerprint, rubric, {"prompt": p, "response": r}) for p, r in chunk
        ]
        result = engine.run_sync(requests)
        scores = [result.verdicts[r.key].score for r in requests]
        return [np.nan if score is None else float(score) for score in scores]

    return run


def make_method(name: str, folder: Path, options: dict[str, Any]) -> Method:
    """The callable that scores pairs the way ``name`` says (loads the model)."""
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    if name == "TransformersJudge":
        return with_judge(
            folder, options["device"], options["batch_size"], options["tokens_per_batch"]
        )
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        folder, local_files_only=True
    ).eval()
    model.to(options["device"])
    if name == "naive loop":
        return lambda chunk: naive_loop(tokenizer, model, chunk)
    size = int(name.removeprefix("pipeline (batch_size=").removesuffix(")"))
    classify = transformers.pipeline(
        "text-classification", model=model, tokenizer=tokenizer, device=options["device"]
    )
    return lambda chunk: with_pipeline(classify, chunk, size)


def serve(conn: Connection, name: str, folder: Path, options: dict[str, Any]) -> None:
    """A worker process: load one way of scoring, then time it on every list of pairs it gets."""
    import torch

    if options["threads"] is not None:
        torch.set_num_threads(options["threads"])
    method = make_method(name, folder, options)
    while (pairs := conn.recv()) is not None:
        started = time.perf_counter()
        scores = method(pairs)
        conn.send((time.perf_counter() - started, scores))


class Worker:
    """One way of scoring, in a process of its own.

    torch keeps a pool of OpenMP threads per calling thread, and glibc's allocator adapts to what a
    process has freed before: ways that share a process slow each other down (a naive loop fell
    from 30 to 19 inputs/s once the judge's thread had run the same model). A process per way
    keeps every way as fast as it is alone; the idle ones wait on a pipe.
    """

    def __init__(self, name: str, folder: Path, options: dict[str, Any]) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.process = context.Process(
            target=serve, args=(child, name, folder, options), daemon=True
        )
        self.process.start()

    def __call__(self, pairs: Sequence[Pair]) -> tuple[float, list[float]]:
        self.conn.send(list(pairs))
        seconds, scores = self.conn.recv()
        return float(seconds), list(scores)

    def close(self) -> None:
        self.conn.send(None)
        self.process.join(timeout=30)


def race(
    workers: dict[str, Worker], pairs: Sequence[Pair], repeats: int
) -> tuple[dict[str, float], dict[str, float], dict[str, list[float]]]:
    """Median items/s and median per-round ratio to the first way, and the last scores.

    The ways take turns for ``repeats`` rounds, so that a drifting machine load hits them alike.
    """
    rates: dict[str, list[float]] = {name: [] for name in workers}
    ratios: dict[str, list[float]] = {name: [] for name in workers}
    scores: dict[str, list[float]] = {}
    baseline = next(iter(workers))
    for _ in range(repeats):
        round_rates = {}
        for name, worker in workers.items():
            seconds, scores[name] = worker(pairs)
            round_rates[name] = len(pairs) / seconds
            rates[name].append(round_rates[name])
        for name in workers:
            ratios[name].append(round_rates[name] / round_rates[baseline])
    medians = {name: float(np.median(values)) for name, values in rates.items()}
    return medians, {name: float(np.median(v)) for name, v in ratios.items()}, scores


BANDS = ((1, 32), (33, 64), (65, 128), (129, 256), (257, CONTEXT_WINDOW))
"""Token-length bands of the per-band table (inclusive bounds)."""


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--inputs",
        choices=("synthetic", "hh-rlhf"),
        default="synthetic",
        help="made-up pairs of log-uniform length, or real hh-rlhf (prompt, response) pairs",
    )
    parser.add_argument("--data", type=Path, default=Path("../shared/data"), help="data root")
    parser.add_argument("--n", type=int, default=500, help="inputs (default 500)")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=64, help="the judge's batch size")
    parser.add_argument(
        "--tokens-per-batch", type=int, default=None, help="the judge's budget (default: its own)"
    )
    parser.add_argument("--pipeline-batch", type=int, default=8, help="the batched pipeline's size")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds (median kept)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)"
    )
    parser.add_argument(
        "--device", default="cpu", help="torch device of every way, e.g. cuda (default cpu)"
    )
    parser.add_argument("--skip-pipeline", action="store_true", help="leave the pipeline out")
    parser.add_argument(
        "--band-size", type=int, default=60, help="inputs per length band (0: no band table)"
    )
    args = parser.parse_args(argv)

    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    # Draw more than needed so that every length band can be filled from the same population.
    wanted = max(args.n, 40 * args.band_size)
    if args.inputs == "hh-rlhf":
        population = hh_rlhf_pairs(wanted, args.seed, args.data)
    else:
        population = synthetic_pairs(wanted, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "random-deberta-v2"
        texts = [text for pair in population for text in pair]
        build_model(folder, texts, hidden=args.hidden, layers=args.layers, seed=args.seed)
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
        # Inputs over the context window are skipped by the judge; leave them out of every way.
        sized = [(pair, len(tokenizer(*pair)["input_ids"])) for pair in population]
        sized = [(pair, length) for pair, length in sized if length <= CONTEXT_WINDOW]
        pairs = [pair for pair, _ in sized[: args.n]]
        lengths = [length for _, length in sized[: args.n]]
        print(
            f"torch {torch.__version__}, transformers {transformers.__version__}, "
            f"{args.threads or torch.get_num_threads()} thread(s), "
            f"load average {os.getloadavg()[0]:.1f}; "
            f"{args.device}; DeBERTa-v2 hidden {args.hidden}, {args.layers} layers; "
            f"{len(pairs)} {args.inputs} "
            f"inputs of {min(lengths)}-{max(lengths)} tokens (median {int(np.median(lengths))}, "
            f"mean {np.mean(lengths):.0f})"
        )

        names = ["naive loop"]
        if not args.skip_pipeline:
            names += ["pipeline (batch_size=1)", f"pipeline (batch_size={args.pipeline_batch})"]
        names.append("TransformersJudge")
        options = {
            "threads": args.threads,
            "device": args.device,
            "batch_size": args.batch_size,
            "tokens_per_batch": args.tokens_per_batch,
        }
        workers = {name: Worker(name, folder, options) for name in names}
        for worker in workers.values():
            worker(pairs[:8])  # load and warm up

        rates, ratios, scores = race(workers, pairs, args.repeats)
        reference = np.asarray(scores["naive loop"])
        print(f"{'method':<28}{'items/s':>10}{'x naive':>10}{'max |score diff|':>19}")
        for name in workers:
            diff = float(np.max(np.abs(np.asarray(scores[name]) - reference)))
            print(f"{name:<28}{rates[name]:>10.1f}{ratios[name]:>10.2f}{diff:>19.2e}")
        for name in workers:
            if name.startswith("pipeline"):
                ratio = rates["TransformersJudge"] / rates[name]
                print(f"TransformersJudge / {name}: {ratio:.2f}x")

        if args.band_size > 0:
            # Where batching pays: the same two ways on inputs of one length band at a time.
            duo = {name: workers[name] for name in ("naive loop", "TransformersJudge")}
            print(f"\nby input length ({args.band_size} inputs per band, same population)")
            print(f"{'tokens':<12}{'n':>5}{'naive items/s':>15}{'judge items/s':>15}{'x naive':>9}")
            for low, high in BANDS:
                band = [pair for pair, length in sized if low <= length <= high]
                band = band[: args.band_size]
                if len(band) < 8:
                    print(f"{low}-{high:<8}{len(band):>5}  (too few inputs)")
                    continue
                band_rates, band_ratios, _ = race(duo, band, args.repeats)
                print(
                    f"{f'{low}-{high}':<12}{len(band):>5}{band_rates['naive loop']:>15.1f}"
                    f"{band_rates['TransformersJudge']:>15.1f}"
                    f"{band_ratios['TransformersJudge']:>9.2f}"
                )
        for worker in workers.values():
            worker.close()
        print(
            f"medians of {args.repeats} interleaved round(s), each way in a process of its own; "
            f"ratios are per round; load average now {os.getloadavg()[0]:.1f}"
        )


if __name__ == "__main__":
    main()
