"""YAML aliases in the files judgeprobe reads: a few repeats are read as written; an alias bomb
(a few hundred bytes of nested aliases standing for millions of values) or a document that
contains itself is refused, naming the file and the line, before anything expands it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from judgeprobe._util.yaml_files import MAX_ALIASED_NODES, parse_yaml
from judgeprobe.audit.config import load_config
from judgeprobe.errors import ConfigError


def _bomb(levels: int) -> str:
    """An audit config whose ``judge_options.extra_body`` holds 9**(levels + 1) values."""
    lines = [
        "judge: openai:gpt-4o-mini@http://127.0.0.1:9/v1",
        "rubric: harmfulness",
        "data: demo",
        "judge_options:",
        "  extra_body:",
        "    a: &a [x, x, x, x, x, x, x, x, x]",
    ]
    for level in range(levels):
        parent, child = chr(97 + level), chr(98 + level)
        lines.append(f"    {child}: &{child} [" + ", ".join([f"*{parent}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_in_a_config_is_refused_with_the_file_and_the_line(tmp_path: Path) -> None:
    config = tmp_path / "audit.yaml"
    config.write_text(_bomb(8))  # 449 bytes for 387 million values
    assert config.stat().st_size < 600
    with pytest.raises(ConfigError) as caught:
        load_config(config)
    assert str(caught.value) == (
        f"{config}, line 10: the aliases repeat more than {MAX_ALIASED_NODES} values (alias *d); "
        "write the values out or drop the alias"
    )


def test_a_few_aliases_are_read_as_written() -> None:
    text = "base: &base {temperature: 0, seed: 1}\nlow: *base\nboth: [*base, *base]\n"
    value = parse_yaml(text, source="options.yaml", error=ConfigError)
    same = {"temperature": 0, "seed": 1}
    assert value == {"base": same, "low": same, "both": [same, same]}


def test_the_bound_counts_values_as_expanded_not_as_written() -> None:
    wide = "a: &a [" + ", ".join(["x"] * (MAX_ALIASED_NODES // 2)) + "]\n"
    assert parse_yaml(wide + "b: *a\n", source="s.yaml", error=ConfigError)["b"][0] == "x"
    with pytest.raises(ConfigError, match=r"^s\.yaml, line 3: the aliases repeat more than"):
        parse_yaml(wide + "b: *a\nc: *a\n", source="s.yaml", error=ConfigError)


def test_an_alias_to_a_value_it_is_inside_is_refused() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_yaml("extra_body:\n  loop: &me [1, *me]\n", source="c.yaml", error=ConfigError)
    assert str(caught.value) == (
        "c.yaml, line 2: an alias repeats a value it is part of (a document that contains itself)"
    )


def test_an_undefined_alias_is_still_invalid_yaml() -> None:
    with pytest.raises(ConfigError, match=r"^c\.yaml: not valid YAML \(found undefined alias"):
        parse_yaml("a: *nowhere\n", source="c.yaml", error=ConfigError)
