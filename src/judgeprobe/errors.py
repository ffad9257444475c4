"""The exception tree of judgeprobe.

Users catch one base class; every error says what went wrong and what to do next. Every
exception class judgeprobe defines is in this tree (those defined elsewhere name their module)::

    JudgeprobeError
    ├── ConfigError            bad option, bad config key, unknown probe or judge
    │   ├── InvalidParameterError  stats: a statistic got a bad argument; also a ValueError
    │   ├── Mismatch               _annotations: a config value does not fit its parameter's
    │   │                          annotation (the registries add which option); also a ValueError
    │   └── AliasBoundError        _util.yaml_files: a YAML alias repeats too much (an alias bomb);
    │                              also a yaml.YAMLError, so the YAML reader stops at it
    ├── DataError              a data file cannot be read; names file, row/line and column
    │   └── RowError               data._records: a bad value in one row, before the loader adds
    │                              the file and the row
    ├── RubricError            a rubric or rubric variant is malformed or fails validation
    ├── JudgeError             a judge backend failed
    │   ├── RetryableJudgeError   transient (429, 5xx, timeout, garbage body); the engine retries it
    │   ├── FatalJudgeError       permanent (401, bad model, missing weights); the engine records it
    │   ├── BadLogprob            judges.completion: a server's logprob is not the log of a
    │   │                         probability (the answer is unparseable); also a ValueError
    │   └── BodyTooLarge          judges.openai_http: an answer longer than the bound it is read
    │                             with (the call fails, unread); also a ValueError
    ├── BudgetExhausted        the call/token budget ran out; rerun to resume from the store
    ├── AnalysisError          a probe's analysis raised an unexpected exception (a defect, not a
    │                          finding); its verdicts are stored
    ├── MissingDependencyError an optional extra is not installed; says which pip command fixes it
    ├── StoreError             the run store is unreadable or belongs to another schema version
    │   └── CodecError             _codec: a plan design cannot be written as JSON or read back
    ├── CardValidationError    report.schema: a card does not match the Judge Card schema
    ├── ComparisonValidationError  compare.schema: a comparison does not match its schema
    └── FigureDataError        report.figures: a figure's data lacks the shape its kind needs (the
                               card says so instead of drawing it); also a ValueError

The CLI catches :class:`JudgeprobeError`, prints its message and exits non-zero without a traceback.
"""

from __future__ import annotations


class JudgeprobeError(Exception):
    """Base class of every error judgeprobe raises on purpose."""


class ConfigError(JudgeprobeError):
    """A configuration value, option or key is invalid."""


class DataError(JudgeprobeError):
    """A data file is unreadable or holds a bad row.

    The message names the file, the row (or line) and the column where they are known.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        row: int | None = None,
        column: str | None = None,
    ) -> None:
        where = []
        if path is not None:
            where.append(str(path))
        if row is not None:
            where.append(f"row {row}")
        if column is not None:
            where.append(f"column {column!r}")
        self.path = path
        self.row = row
        self.column = column
        self.reason = message
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


class RubricError(JudgeprobeError):
    """A rubric or a rubric variant is malformed or was rejected by validation."""


class JudgeError(JudgeprobeError):
    """A judge backend failed to produce a verdict."""


class RetryableJudgeError(JudgeError):
    """A transient failure: the engine retries it with backoff.

    ``retry_after`` (seconds) is honoured when the server sent one.
    """

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class FatalJudgeError(JudgeError):
    """A permanent failure: retrying cannot help; the engine records it as an error verdict."""


class MissingDependencyError(JudgeprobeError):
    """An optional dependency is missing; the message gives the pip command that installs it."""

    def __init__(self, package: str, extra: str | None = None) -> None:
        hint = f"pip install 'judgeprobe[{extra}]'" if extra else f"pip install {package}"
        super().__init__(f"this feature needs the package {package!r}; install it with: {hint}")


class StoreError(JudgeprobeError):
    """The run store cannot be used."""


class BudgetExhausted(JudgeprobeError):
    """The call or token budget ran out; what was judged is stored and the next run resumes."""


class AnalysisError(JudgeprobeError):
    """A probe's analysis of its verdicts raised an unexpected exception.

    A defect of the probe, never a finding: the CLI exits 2 with the message, not 1 (the code
    of a card that fails its gate), so a crash cannot pass for a failing judge.
    """
