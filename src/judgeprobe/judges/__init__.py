"""Judges: the protocol and its backends (callable, llama.cpp, classifier, OpenAI-compatible)."""

from judgeprobe.core.judge import Judge, JudgeCapabilities
from judgeprobe.judges.base import BaseJudge, InProcessJudge
from judgeprobe.judges.callable import CallableJudge
from judgeprobe.judges.parsing import (
    label_score,
    parse_label,
    verdict_from_distribution,
    verdict_from_text,
)
from judgeprobe.judges.registry import build_judge

__all__ = [
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
]
