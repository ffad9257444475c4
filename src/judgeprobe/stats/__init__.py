"""Statistics: every estimate with a confidence interval and n."""

from judgeprobe.stats.result import ConfidenceInterval, Estimate, TestResult

__all__ = ["ConfidenceInterval", "Estimate", "TestResult"]
