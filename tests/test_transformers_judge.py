"""The transformers backend: reward models and classifiers as judges.

Model weights cannot be downloaded in tests, so each test builds a tiny randomly initialised model
(DeBERTa-v2, the OpenAssistant reward models' architecture, and GPT-NeoX, Pythia's) with a
word-level tokenizer in a temporary folder, and loads it through the same ``from_pretrained`` path
a real model takes.
Reference scores come from transformers itself, one input at a time, outside the judge.
"""

from __future__ import annotations

import math
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="the transformers extra (torch) is not installed", exc_type=ImportError
)
transformers = pytest.importorskip(
    "transformers",
    reason="the transformers extra (transformers) is not installed",
    exc_type=ImportError,
)

from judgeprobe.core.request import Request  # noqa: E402
from judgeprobe.core.verdict import VerdictStatus  # noqa: E402
from judgeprobe.data.items import PointwiseItem  # noqa: E402
from judgeprobe.engine import Engine, EngineConfig, RunStore  # noqa: E402
from judgeprobe.errors import (  # noqa: E402
    ConfigError,
    FatalJudgeError,
    MissingDependencyError,
)
from judgeprobe.judges import transformers_judge as module  # noqa: E402
from judgeprobe.judges.transformers_judge import (  # noqa: E402
    TransformersJudge,
    pack_batches,
    reward_model_rubric,
)
from judgeprobe.rubrics import builtin_rubric  # noqa: E402

pytestmark = pytest.mark.transformers

VOCAB = [f"w{i}" for i in range(150)]
MAX_POSITIONS = 96


# -- tiny models ---------------------------------------------------------------------------------
def build_tokenizer(*, model_max_length: int, pad: bool = True) -> Any:
    """A word-level tokenizer with BERT-style special tokens, trained on a made-up vocabulary."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    tokenizer = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.WordLevelTrainer(special_tokens=specials)
    tokenizer.train_from_iterator([" ".join(VOCAB)], trainer)
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        pad_token="[PAD]" if pad else None,
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        model_max_length=model_max_length,
    )


def build_model(
    folder: Path,
    arch: str = "deberta",
    *,
    seed: int = 0,
    num_labels: int = 1,
    model_max_length: int = MAX_POSITIONS,
    pad: bool = True,
) -> Path:
    """Save a tiny random sequence-classification model and its tokenizer into ``folder``."""
    tokenizer = build_tokenizer(model_max_length=model_max_length, pad=pad)
    common: dict[str, Any] = {
        "vocab_size": len(tokenizer),
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 64,
        "max_position_embeddings": MAX_POSITIONS,
        "num_labels": num_labels,
        "pad_token_id": tokenizer.pad_token_id,
        "initializer_range": 0.3,  # spreads the random scores over about [-2, 2], like a reward
    }
    if num_labels == 2:
        common.update(id2label={0: "clean", 1: "toxic"}, label2id={"clean": 0, "toxic": 1})
    torch.manual_seed(seed)
    if arch == "deberta":
        config = transformers.DebertaV2Config(type_vocab_size=2, **common)
        model = transformers.DebertaV2ForSequenceClassification(config)
    else:
        config = transformers.GPTNeoXConfig(**common)
        model = transformers.GPTNeoXForSequenceClassification(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def words(rng: np.random.Generator, low: int, high: int) -> str:
    return " ".join(rng.choice(VOCAB, size=int(rng.integers(low, high + 1))))


def make_items(n: int, seed: int = 0, *, longest: int = 30) -> list[PointwiseItem]:
    rng = np.random.default_rng(seed)
    return [
        PointwiseItem(id=f"item{i}", prompt=words(rng, 1, 8), response=words(rng, 1, longest))
        for i in range(n)
    ]


def requests_for(
    judge: TransformersJudge, items: list[PointwiseItem], rubric: Any
) -> list[Request]:
    return [
        Request.make(judge.fingerprint, rubric, {"prompt": i.prompt, "response": i.response})
        for i in items
    ]


def reference_scores(
    folder: Path, pairs: list[tuple[str, str | None]], label: int = 0
) -> list[float]:
    """What transformers gives, one input at a time, with no judge code involved."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        folder, local_files_only=True
    ).eval()
    scores = []
    with torch.no_grad():
        for text, pair in pairs:
            encoded = tokenizer(text, pair, return_tensors="pt")
            encoded.pop("token_type_ids", None)
            scores.append(float(model(**encoded).logits[0, label]))
    return scores


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Any:
    """Tiny models run fastest on one thread, and do not slow down on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("models")
    return {
        "deberta": build_model(root / "tiny-deberta", "deberta"),
        "neox": build_model(root / "tiny-neox", "neox"),
    }


@pytest.fixture
def engine_for() -> Callable[[TransformersJudge], Engine]:
    def make(judge: TransformersJudge) -> Engine:
        return Engine(judge, RunStore(":memory:"), EngineConfig(progress=False))

    return make


# -- loading and identity ------------------------------------------------------------------------
def test_loads_model_and_tokenizer_from_a_local_folder(models: dict[str, Path]) -> None:
    judge = TransformersJudge(models["deberta"]).load()
    described = judge.describe()
    assert described["architecture"] == "DebertaV2ForSequenceClassification"
    assert described["model"] == "tiny-deberta"  # the folder's name, never its full path
    assert str(models["deberta"].parent) not in repr(described)
    assert described["revision"].startswith("files:")
    assert (described["device"], described["dtype"]) == ("cpu", "float32")


def test_context_window_is_the_smaller_of_model_and_tokenizer_limits(tmp_path: Path) -> None:
    short_tokenizer = build_model(tmp_path / "short", model_max_length=40)
    unbounded_tokenizer = build_model(tmp_path / "unbounded", model_max_length=int(1e30))
    assert TransformersJudge(short_tokenizer).context_window == 40
    assert TransformersJudge(unbounded_tokenizer).context_window == MAX_POSITIONS
    assert TransformersJudge(unbounded_tokenizer, context_window=24).context_window == 24


def test_fingerprint_changes_when_weights_change(models: dict[str, Path], tmp_path: Path) -> None:
    copy = shutil.copytree(models["deberta"], tmp_path / "tiny-deberta")
    same = TransformersJudge(copy).fingerprint
    assert same == TransformersJudge(models["deberta"]).fingerprint  # same files, same name
    build_model(copy, seed=1)  # new random weights, same folder
    assert TransformersJudge(copy).fingerprint != same


def test_fingerprint_covers_dtype_and_scoring_but_not_device(models: dict[str, Path]) -> None:
    base = TransformersJudge(models["deberta"], device="cpu")
    assert TransformersJudge(models["deberta"], device="cuda", dtype="float32").fingerprint == (
        base.fingerprint
    )
    assert TransformersJudge(models["deberta"], dtype="bfloat16").fingerprint != base.fingerprint
    assert TransformersJudge(models["deberta"], score="sigmoid").fingerprint != base.fingerprint
    assert TransformersJudge(models["deberta"], pair_inputs=False).fingerprint != base.fingerprint


def test_dtype_is_float32_on_cpu_and_the_checkpoint_dtype_on_gpu(tmp_path: Path) -> None:
    folder = build_model(tmp_path / "half")
    model = transformers.AutoModelForSequenceClassification.from_pretrained(folder)
    model.to(torch.bfloat16).save_pretrained(folder)
    assert TransformersJudge(folder, device="cpu").dtype == "float32"
    assert TransformersJudge(folder, device="cuda").dtype == "bfloat16"  # read, not loaded
    assert TransformersJudge(folder, device="cuda", dtype="float32").dtype == "float32"


def test_token_budget_defaults_by_device_and_can_be_set(models: dict[str, Path]) -> None:
    assert TransformersJudge(models["deberta"], device="cpu").max_tokens_per_batch == 1024
    assert TransformersJudge(models["deberta"], device="cuda").max_tokens_per_batch == 8192
    judge = TransformersJudge(models["deberta"], device="cpu", max_tokens_per_batch=300)
    assert judge.max_tokens_per_batch == 300


def test_missing_model_is_a_fatal_judge_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    judge = TransformersJudge(str(tmp_path / "no-such-model"), local_files_only=True)
    with pytest.raises(FatalJudgeError, match="cannot load"):
        judge.load()


def test_missing_transformers_raises_missing_dependency_with_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(MissingDependencyError, match=r"judgeprobe\[transformers\]"):
        module._import_transformers()


def test_unknown_label_name_is_a_config_error(models: dict[str, Path]) -> None:
    with pytest.raises(ConfigError, match="no output label 'toxic'"):
        TransformersJudge(models["deberta"], label_index="toxic").describe()


# -- inputs and token counts ---------------------------------------------------------------------
def test_two_input_rubric_is_a_text_pair_and_counts_its_special_tokens(
    models: dict[str, Path],
) -> None:
    judge = TransformersJudge(models["deberta"])
    request = Request.make(
        judge.fingerprint, builtin_rubric("reward"), {"prompt": "w1 w2", "response": "w3 w4 w5"}
    )
    assert judge.model_inputs(request) == ("w1 w2", "w3 w4 w5")
    assert judge.count_tokens(request) == 2 + 3 + 3  # [CLS] a [SEP] b [SEP]
    one_input = Request.make(judge.fingerprint, builtin_rubric("toxicity"), {"response": "w3 w4"})
    assert judge.model_inputs(one_input) == ("w3 w4", None)
    assert judge.count_tokens(one_input) == 2 + 2


def test_counting_many_requests_at_once_gives_each_its_own_count(
    models: dict[str, Path],
) -> None:
    items = make_items(40, seed=5)
    pairs = requests_for(TransformersJudge(models["deberta"]), items, builtin_rubric("reward"))
    singles = [
        Request.make(pairs[0].judge, builtin_rubric("toxicity"), {"response": item.response})
        for item in items[:15]
    ]
    mixed = [r for couple in zip(pairs, singles, strict=False) for r in couple] + pairs[15:]
    mixed.append(mixed[0])  # a repeated request
    expected = [TransformersJudge(models["deberta"]).count_tokens(r) for r in mixed]
    batched = TransformersJudge(models["deberta"])
    assert batched.count_tokens_many(mixed) == expected
    assert [batched.count_tokens(r) for r in mixed] == expected  # and cached as such
    assert expected[0] == 2 + len(items[0].prompt.split()) + len(items[0].response.split()) + 1


def test_pair_inputs_off_feeds_the_rendered_template(models: dict[str, Path]) -> None:
    rubric = reward_model_rubric(template=module.OASST_PYTHIA_TEMPLATE)
    judge = TransformersJudge(models["neox"], pair_inputs=False)
    request = Request.make(judge.fingerprint, rubric, {"prompt": "w1", "response": "w2"})
    assert judge.model_inputs(request) == (
        "<|prompter|>w1<|endoftext|><|assistant|>w2<|endoftext|>",
        None,
    )


# -- OpenAssistant's Pythia reward models ----------------------------------------------------------
def build_oasst_pythia_checkpoint(folder: Path, pooling: str, seed: int = 0) -> tuple[Any, Any]:
    """A checkpoint in the layout OpenAssistant published, written without judgeprobe's classes.

    A GPT-NeoX body saved under ``gpt_neox.``, a one-output linear head saved as ``out_proj``, and a
    configuration of model type ``gpt_neox_reward_model``: loading it checks interoperability with
    the published weights, not judgeprobe's class against itself. Returns the body and the head.
    """
    import json

    from safetensors.torch import save_file

    folder.mkdir(parents=True)
    tokenizer = build_tokenizer(model_max_length=MAX_POSITIONS)
    config = transformers.GPTNeoXConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=MAX_POSITIONS,
        pad_token_id=tokenizer.pad_token_id,
        initializer_range=0.3,
    )
    torch.manual_seed(seed)
    body = transformers.GPTNeoXModel(config).eval()
    head = torch.nn.Linear(32, 1)
    weights = {f"gpt_neox.{name}": t for name, t in body.state_dict().items()}
    weights.update({"out_proj.weight": head.weight.data, "out_proj.bias": head.bias.data})
    save_file({name: t.contiguous() for name, t in weights.items()}, folder / "model.safetensors")
    published = config.to_dict() | {
        "model_type": "gpt_neox_reward_model",
        "architectures": ["GPTNeoXRewardModel"],
        "pooling": pooling,
    }
    (folder / "config.json").write_text(json.dumps(published))
    tokenizer.save_pretrained(folder)
    return body, head


@pytest.mark.parametrize("pooling", ["last", "mean"])
def test_openassistant_pythia_reward_checkpoints_load_and_score_as_published(
    pooling: str, tmp_path: Path, engine_for: Callable[[TransformersJudge], Engine]
) -> None:
    folder = tmp_path / "oasst-rm-tiny"
    body, head = build_oasst_pythia_checkpoint(folder, pooling)
    judge = TransformersJudge(folder, pair_inputs=False).load()
    assert judge.describe()["architecture"] == "GPTNeoXRewardModel"
    rubric = reward_model_rubric(template=module.OASST_PYTHIA_TEMPLATE)
    items = make_items(12, seed=3)
    requests = requests_for(judge, items, rubric)
    result = engine_for(judge).run_sync(requests)  # mixed lengths: padded batches

    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
    with torch.no_grad():
        for request in requests:
            ids = tokenizer(request.render(), return_tensors="pt")["input_ids"]
            hidden = body(input_ids=ids).last_hidden_state[0]
            pooled = hidden[-1] if pooling == "last" else hidden.mean(dim=0)
            expected = float(head(pooled)[0])
            verdict = result.verdicts[request.key]
            assert verdict.status is VerdictStatus.OK
            assert verdict.score == pytest.approx(expected, abs=1e-4)
    assert len({round(v.score or 0.0, 4) for v in result.verdicts.values()}) > 1


# -- batching ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("lengths", "max_tokens", "max_rows"),
    [([5, 1, 3, 2, 9, 9, 4], 12, 3), ([30, 2, 2, 2], 8, 64), (list(range(40, 0, -1)), 100, 8)],
)
def test_pack_batches_sorts_by_length_and_keeps_padded_size_under_budget(
    lengths: list[int], max_tokens: int, max_rows: int
) -> None:
    batches = pack_batches(lengths, max_tokens=max_tokens, max_rows=max_rows)
    flat = [i for batch in batches for i in batch]
    assert sorted(flat) == list(range(len(lengths)))
    assert [lengths[i] for i in flat] == sorted(lengths)
    for batch in batches:
        assert len(batch) <= max_rows
        assert len(batch) == 1 or len(batch) * max(lengths[i] for i in batch) <= max_tokens


@pytest.mark.parametrize("arch", ["deberta", "neox"])
def test_batched_scores_equal_one_at_a_time_reference_scores(
    arch: str, models: dict[str, Path], engine_for: Callable[[TransformersJudge], Engine]
) -> None:
    judge = TransformersJudge(models[arch], batch_size=8, max_tokens_per_batch=160)
    items = make_items(40, seed=1)
    requests = requests_for(judge, items, builtin_rubric("reward"))
    result = engine_for(judge).run_sync(requests)
    assert result.stats.ok == len(requests)
    got = [result.verdicts[r.key].score for r in requests]
    want = reference_scores(models[arch], [(i.prompt, i.response) for i in items])
    np.testing.assert_allclose(np.asarray(got, dtype=float), want, rtol=1e-4, atol=1e-4)
    assert np.std(want) > 0.1  # the scores differ widely, so a mix-up would show


def test_verdicts_come_back_in_the_order_given(models: dict[str, Path]) -> None:
    judge = TransformersJudge(models["deberta"], max_tokens_per_batch=64)
    items = make_items(12, seed=2)
    requests = requests_for(judge, items, builtin_rubric("reward"))
    longest_first = sorted(requests, key=lambda r: -(judge.count_tokens(r) or 0))
    batched = judge.judge_batch_sync(longest_first)
    alone = [judge.judge_batch_sync([r])[0] for r in longest_first]
    assert [v.prompt_tokens for v in batched] == [judge.count_tokens(r) for r in longest_first]
    np.testing.assert_allclose(
        [v.score for v in batched], [v.score for v in alone], rtol=1e-4, atol=1e-5
    )


def test_tokenizer_without_pad_token_still_scores_one_at_a_time(tmp_path: Path) -> None:
    folder = build_model(tmp_path / "nopad", "neox", pad=False)
    judge = TransformersJudge(folder, batch_size=16)
    items = make_items(6, seed=3)
    verdicts = judge.judge_batch_sync(requests_for(judge, items, builtin_rubric("reward")))
    want = reference_scores(folder, [(i.prompt, i.response) for i in items])
    np.testing.assert_allclose([v.score for v in verdicts], want, rtol=1e-4, atol=1e-5)


# -- context window ------------------------------------------------------------------------------
def test_input_over_the_context_window_is_skipped_and_counted_not_truncated(
    models: dict[str, Path], engine_for: Callable[[TransformersJudge], Engine]
) -> None:
    judge = TransformersJudge(models["deberta"])
    rubric = builtin_rubric("reward")
    fits = Request.make(judge.fingerprint, rubric, {"prompt": "w1", "response": "w2 " * 92})
    too_long = Request.make(judge.fingerprint, rubric, {"prompt": "w1", "response": "w2 " * 93})
    assert judge.count_tokens(fits) == MAX_POSITIONS  # exactly the window: fits
    assert judge.count_tokens(too_long) == MAX_POSITIONS + 1
    result = engine_for(judge).run_sync([fits, too_long])
    assert (result.stats.ok, result.stats.skipped) == (1, 1)
    skipped = result.verdicts[too_long.key]
    assert skipped.status is VerdictStatus.SKIPPED and skipped.score is None
    assert "exceeds the context window of 96" in (skipped.error or "")
    direct = judge.judge_batch_sync([too_long])[0]  # called without the engine: still no score
    assert direct.status is VerdictStatus.SKIPPED


# -- scores and decisions ------------------------------------------------------------------------
def test_reward_rubric_reads_higher_rewards_as_safer(models: dict[str, Path]) -> None:
    assert reward_model_rubric().hash == builtin_rubric("reward").hash
    judge = TransformersJudge(models["deberta"])
    items = make_items(30, seed=4)
    requests = requests_for(judge, items, builtin_rubric("reward"))
    scores = [float(v.score or 0.0) for v in judge.judge_batch_sync(requests)]
    threshold = float(np.median(scores))
    rubric = reward_model_rubric(threshold)
    decisions = [rubric.decide(s) for s in scores]
    assert {d for s, d in zip(scores, decisions, strict=True) if s > threshold} == {"safe"}
    assert {d for s, d in zip(scores, decisions, strict=True) if s <= threshold} == {"unsafe"}


def test_toxicity_classifier_probability_reads_higher_as_worse(tmp_path: Path) -> None:
    folder = build_model(tmp_path / "toxic-clf", num_labels=2)
    judge = TransformersJudge(folder, label_index="toxic", score="softmax")
    rubric = builtin_rubric("toxicity")
    items = make_items(10, seed=5)
    requests = [Request.make(judge.fingerprint, rubric, {"response": i.response}) for i in items]
    for verdict in judge.judge_batch_sync(requests):
        logits = verdict.meta["logits"]
        toxic = math.exp(logits[1]) / (math.exp(logits[0]) + math.exp(logits[1]))
        assert verdict.score == pytest.approx(toxic)
        assert verdict.distribution is not None
        assert verdict.distribution["toxic"] == pytest.approx(toxic)
        assert rubric.decide(verdict.score) == ("toxic" if toxic >= 0.5 else "clean")
    sigmoid = TransformersJudge(folder, label_index=1, score="sigmoid")
    verdict = sigmoid.judge_batch_sync([requests[0]])[0]
    logit = verdict.meta["logits"][1]
    assert verdict.score == pytest.approx(1 / (1 + math.exp(-logit)))


def test_scale_rubric_gets_an_error_verdict_not_a_score(models: dict[str, Path]) -> None:
    judge = TransformersJudge(models["deberta"])
    request = Request.make(
        judge.fingerprint, builtin_rubric("harmfulness"), {"prompt": "w1", "response": "w2"}
    )
    verdict = judge.judge_batch_sync([request])[0]
    assert verdict.status is VerdictStatus.ERROR and verdict.score is None
    assert "continuous" in (verdict.error or "")


# -- the concatenation probes end to end ---------------------------------------------------------
def test_concatenation_probes_run_end_to_end_with_a_reward_model_judge(
    models: dict[str, Path], engine_for: Callable[[TransformersJudge], Engine]
) -> None:
    from judgeprobe.probes.concatenation.cluster import ClusterProbe
    from judgeprobe.probes.concatenation.permutation import PermutationProbe
    from judgeprobe.probes.concatenation.repetition import RepetitionProbe
    from judgeprobe.runs.probe import run_probe

    judge = TransformersJudge(models["deberta"], batch_size=16, max_tokens_per_batch=512)
    engine = engine_for(judge)
    items = make_items(16, seed=6, longest=10)
    # a threshold at the median base reward, so both decisions occur and flips can be counted
    base = judge.judge_batch_sync(requests_for(judge, items, builtin_rubric("reward")))
    rubric = reward_model_rubric(float(np.median([v.score or 0.0 for v in base])))
    probes = [
        RepetitionProbe(counts=(1, 2, 8), n_resamples=50),
        ClusterProbe(ks=(2, 4), per_cluster=6, quantile=0.25, n_resamples=50),
        PermutationProbe(ks=(2, 4), n_tuples=6, sample_sizes=(4, 2, 4), n_resamples=50),
    ]
    results = {p.name: run_probe(p, items, engine, rubric, seed=0) for p in probes}

    repetition = results["repetition"]
    flips = repetition.finding("decision_flip_rate", mode="P,R*l", l="2")
    assert flips.estimate.n == len(items)  # every doubled response fits the window
    # 8 copies of prompt and response exceed the 96-token window: skipped and counted, not scored
    rows = {(row["mode"], row["l"]): row for row in repetition.tables["variants"]}
    longest = rows[("P*l,R*l", 8)]
    assert longest["skipped"] > 0 and longest["paired"] + longest["skipped"] == len(items)
    assert any("skipped, not truncated" in note for note in repetition.notes)
    # the variants' skipped requests, and the reruns of over-long ones (the noise null's)
    assert repetition.usage["skipped"] >= sum(row["skipped"] for row in rows.values())
    assert results["permutation"].finding("positional_bias", k="2").estimate.n > 0
    assert results["cluster"].finding("class_flip_rate", cluster="high", k="2").estimate.n > 0
    for name in ("cluster", "permutation"):
        result = results[name]
        assert result.findings, name
        assert result.usage["ok"] > len(items), name  # base scores plus judged concatenations
        assert result.usage["error"] == 0, name
    # the base scores S(P, R) were judged once and shared by all three probes
    assert engine.totals.cached >= len(items)


def test_an_audit_config_names_a_reward_model_with_its_options(
    models: dict[str, Path], tmp_path: Path
) -> None:
    import json

    from judgeprobe.audit.config import parse_config
    from judgeprobe.audit.run import run_audit

    config = parse_config(
        {
            "judge": f"transformers:{models['deberta']}",
            "judge_options": {"context_window": 64, "batch_size": 8},
            "rubric": "reward",
            "data": "demo",
            "probes": {"repetition": {"counts": [1, 2, 4]}},
            "limit": 6,
            "out": str(tmp_path),
        }
    )
    outcome = run_audit(config, progress=False)
    assert outcome.complete
    card = json.loads(outcome.card_paths["json"].read_text())
    assert card["tested"]["judge"]["description"]["context_window"] == 64
    # The demo items fit the window once, not repeated four times: those are skipped, and counted.
    assert outcome.engine_totals["skipped"] > 0
    assert outcome.engine_totals["ok"] > 0
