"""How a transformers judge loads its Hugging Face model, and names a local one.

The loading side of :class:`~judgeprobe.judges.transformers_judge.TransformersJudge`: transformers
and torch are imported on first use (an optional extra), with OpenAssistant's Pythia reward-model
architecture registered; a model is loaded with transformers' progress bar off and a load failure
said plainly; a local model folder is identified by a hash of its files; and a tokenizer without a
pad token gets the model's, where it has one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judgeprobe._util.hashing import content_hash, file_hash
from judgeprobe.errors import FatalJudgeError, MissingDependencyError

_SKIPPED_FILES = (".md", ".gitattributes", ".lock")
"""Files of a model folder left out of its hash: they do not change what the model computes."""


def from_pretrained(
    factory: Any,
    ref: str,
    *,
    name: str,
    revision: str | None,
    local_files_only: bool,
    **kwargs: Any,
) -> Any:
    """``factory.from_pretrained`` of the model ``ref`` (a Hub id or a folder; ``name`` in errors).

    A model that cannot be loaded is a :class:`~judgeprobe.errors.FatalJudgeError` saying what a
    folder needs; transformers' own progress bar is off while loading.
    """
    # transformers' own "Loading weights" bar would cut through the engine's progress display.
    logging = import_transformers().utils.logging
    shown = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        return factory.from_pretrained(
            ref,
            revision=revision,
            local_files_only=local_files_only,
            **kwargs,
        )
    except (OSError, ValueError, KeyError) as exc:
        raise FatalJudgeError(
            f"cannot load {name!r} with {factory.__name__}: {exc}. Check the model "
            "id or folder (a folder needs config, weights and tokenizer files from "
            "save_pretrained); another custom architecture must be registered with "
            "AutoModelForSequenceClassification before loading (OpenAssistant's Pythia "
            "reward models, gpt_neox_reward_model, are known already)"
        ) from exc
    finally:
        if shown:
            logging.enable_progress_bar()


def ensure_pad_token(tokenizer: Any, config: Any) -> bool:
    """Give the tokenizer the model's pad token where it lacks one; False when none exists.

    Without a pad token inputs cannot be padded, so the judge runs them one at a time rather than
    invent a pad token that could change what a decoder model reads as the last token.
    """
    if tokenizer.pad_token_id is not None:
        return True
    pad_id = getattr(config, "pad_token_id", None)
    if isinstance(pad_id, int):
        tokenizer.pad_token = tokenizer.convert_ids_to_tokens(pad_id)
        return True
    return False


def config_dtype(config: Any) -> Any:
    value = config.__dict__.get("dtype")
    return value if value is not None else config.__dict__.get("torch_dtype")


def folder_hash(folder: Path) -> str:
    """A hash of a model folder's files (weights, config, tokenizer), names included."""
    entries = sorted(
        p
        for p in folder.iterdir()
        if p.is_file() and not p.name.startswith(".") and not p.name.endswith(_SKIPPED_FILES)
    )
    return content_hash([[p.name, _cached_file_hash(p)] for p in entries])


_FILE_HASHES: dict[tuple[str, int, int], str] = {}


def _cached_file_hash(path: Path) -> str:
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _FILE_HASHES:
        _FILE_HASHES[key] = file_hash(str(path))
    return _FILE_HASHES[key]


def transformers_at_least(module: Any, major: int, minor: int) -> bool:
    parts = str(module.__version__).split(".")
    try:
        return (int(parts[0]), int(parts[1])) >= (major, minor)
    except (IndexError, ValueError):
        return True


def import_transformers() -> Any:
    """transformers, with OpenAssistant's Pythia reward-model architecture registered."""
    try:
        import transformers
    except ImportError as exc:
        raise MissingDependencyError("transformers", extra="transformers") from exc
    from judgeprobe.judges.pythia_reward import register_pythia_reward_model

    register_pythia_reward_model(transformers, import_torch())
    return transformers


def import_torch() -> Any:
    try:
        import torch
    except ImportError as exc:
        raise MissingDependencyError("torch", extra="transformers") from exc
    return torch
