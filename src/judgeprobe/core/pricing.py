"""What a judge's tokens cost: the ``pricing`` section of an audit config.

A price table is the user's (providers change theirs, a local server costs nothing per token);
the bill of an audit (:mod:`judgeprobe.audit.billing`) multiplies the tokens it plans by it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Pricing(BaseModel):
    """Price per million input (prompt) and output (completion) tokens.

    Examples
    --------
    >>> Pricing(input_per_mtok=0.4, output_per_mtok=1.6).cost(1_000_000, 10_000)
    0.416
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(default=0.0, ge=0)
    currency: str = "USD"

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """The price of ``prompt_tokens`` in and ``completion_tokens`` out."""
        return round(
            (prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok) / 1e6,
            6,
        )
