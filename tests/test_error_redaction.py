"""Specifications of the error line the command line prints: never a credential.

Error messages quote what the user typed (a judge spec, a base URL, a ``-J`` value), so a base
URL's ``user:password@`` or an ``api_key`` in an option's value would be printed as it is. The
console entry point passes every message through :func:`redact_message` once.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from judgeprobe._cli.main import main
from judgeprobe._util.redaction import REDACTED, Redactor

PASSWORD = "hunter2secret"
KEY = "sk-abcdefghijk"


def _error_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "argv", ["judgeprobe", *argv])
        with pytest.raises(SystemExit) as exited:
            main()
    assert exited.value.code == 2
    captured = capsys.readouterr()
    return " ".join((captured.out + captured.err).split())


@pytest.mark.parametrize(
    ("judge", "options"),
    [
        (f"openai:gpt-x@htps://bob:{PASSWORD}@host/v1", []),  # a misspelt scheme
        (f"openai:gpt-x@https:/bob:{PASSWORD}@host/v1", []),
        (f"openai:gpt-x@bob:{PASSWORD}@host:8080/v1", []),  # no scheme at all
        (f"opnai:gpt-x@https://bob:{PASSWORD}@host/v1", []),  # a misspelt backend
        (f"openai:gpt-x@https://bob:{PASSWORD}@host/v1", ["-J", "bogus=1"]),  # an unknown option
        (  # a -J type error, whose message shows the value
            "openai:gpt-x@https://host/v1",
            ["-J", f"max_tokens={{api_key: {KEY}}}"],
        ),
        ("openai:gpt-x@https://host/v1", ["-J", f'max_tokens={{"Authorization": "Bearer {KEY}"}}']),
    ],
    ids=["scheme", "one-slash", "no-scheme", "backend", "unknown-option", "type", "header"],
)
def test_a_config_error_prints_no_credential(
    judge: str,
    options: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.jsonl").write_text('{"id": "a", "prompt": "p", "response": "r", "label": 1}\n')
    argv = ["score", "--judge", judge, "--rubric", "harmfulness", "--data", "d.jsonl", *options]

    line = _error_line(argv, capsys)

    assert line.startswith("error:")
    assert PASSWORD not in line and KEY not in line and "abcdefghijk" not in line
    assert REDACTED in line
    if "judge '" in line:
        assert "judge 'openai:gpt-x@" in line or "judge 'opnai:gpt-x@" in line  # still named


def test_redact_message_keeps_what_is_no_secret() -> None:
    from judgeprobe._util.redaction import redact_message

    redactor = Redactor(environment=False)
    text = (
        "use openai:MODEL@BASE_URL; option 'api_key_env': 3 (int); mail bob@example.org; "
        "max_tokens=20, token=abc, {'password': 'two words'}"
    )

    assert redact_message(text, redactor) == (
        "use openai:MODEL@BASE_URL; option 'api_key_env': 3 (int); mail bob@example.org; "
        f"max_tokens=20, token={REDACTED}, {{'password': '{REDACTED}'}}"
    )
