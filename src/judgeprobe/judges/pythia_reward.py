"""OpenAssistant's Pythia reward-model architecture, so its checkpoints load without its trainer.

OpenAssistant published GPT-NeoX (Pythia) reward models, such as
``OpenAssistant/oasst-rm-2.1-pythia-1.4b-epoch-2.5``, with an architecture transformers does not
ship (model type ``gpt_neox_reward_model``): a GPT-NeoX body whose hidden state at the last real
token (``pooling: last``, the default) or averaged over the real tokens (``pooling: mean``) goes
through one linear layer to a single reward. Loading such a checkpoint normally needs
OpenAssistant's training code; this module declares the same architecture, with the parameter
names of the published weights (``gpt_neox.*`` and ``out_proj.*``), and registers it with
transformers' auto classes. It registers nothing when the model type is already known (for
instance when OpenAssistant's own code was imported first).

The models read OpenAssistant's chat format, ``<|prompter|>...<|endoftext|><|assistant|>...
<|endoftext|>`` (:data:`~judgeprobe.judges.transformers_judge.OASST_PYTHIA_TEMPLATE`), as one
text: build the judge with ``pair_inputs=False``.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

MODEL_TYPE = "gpt_neox_reward_model"
POOLINGS = ("last", "mean")

_lock = threading.Lock()


def register_pythia_reward_model(transformers: Any, torch: Any) -> bool:
    """Make ``gpt_neox_reward_model`` checkpoints loadable; True when this call registered it."""
    known = importlib.import_module("transformers.models.auto.configuration_auto").CONFIG_MAPPING
    with _lock:
        if MODEL_TYPE in known:
            return False
        config_class, model_class = _define(transformers, torch)
        transformers.AutoConfig.register(MODEL_TYPE, config_class)
        transformers.AutoModelForSequenceClassification.register(config_class, model_class)
        return True


def _define(transformers: Any, torch: Any) -> tuple[type, type]:
    """The configuration and model classes (defined on demand: torch is an optional extra)."""
    outputs = importlib.import_module("transformers.modeling_outputs")
    neox = importlib.import_module("transformers.models.gpt_neox.modeling_gpt_neox")
    pretrained: Any = neox.GPTNeoXPreTrainedModel

    class GPTNeoXRewardConfig(transformers.GPTNeoXConfig):  # type: ignore[misc]
        """A GPT-NeoX configuration with the pooling of the reward head."""

        model_type = MODEL_TYPE

        def __init__(self, pooling: str = "last", **kwargs: Any) -> None:
            kwargs.setdefault("num_labels", 1)
            super().__init__(**kwargs)
            self.pooling = pooling or "last"

    class GPTNeoXRewardModel(pretrained):  # type: ignore[misc]
        """A GPT-NeoX body and a one-output linear head over the pooled last hidden states."""

        config_class = GPTNeoXRewardConfig

        def __init__(self, config: Any) -> None:
            super().__init__(config)
            if config.pooling not in POOLINGS:
                raise ValueError(f"pooling must be one of {POOLINGS}, not {config.pooling!r}")
            self.gpt_neox = transformers.GPTNeoXModel(config)
            self.out_proj = torch.nn.Linear(config.hidden_size, 1)
            self.post_init()

        def forward(self, input_ids: Any, attention_mask: Any = None) -> Any:
            hidden = self.gpt_neox(
                input_ids=input_ids, attention_mask=attention_mask
            ).last_hidden_state
            if attention_mask is None:
                attention_mask = torch.ones(
                    hidden.shape[:2], dtype=torch.long, device=hidden.device
                )
            mask = attention_mask.to(hidden.dtype)
            if self.config.pooling == "mean":
                pooled = (hidden * mask.unsqueeze(-1)).sum(dim=1) / mask.sum(dim=1, keepdim=True)
            else:
                # The last real token, wherever the padding is: the largest masked position.
                positions = torch.arange(hidden.shape[1], device=hidden.device)
                last = (positions * attention_mask).argmax(dim=1)
                pooled = hidden[torch.arange(hidden.shape[0], device=hidden.device), last]
            return outputs.SequenceClassifierOutput(logits=self.out_proj(pooled))

    return GPTNeoXRewardConfig, GPTNeoXRewardModel
