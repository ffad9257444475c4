"""What a judge's tokens cost: the ``pricing`` section of an audit config.

A price table is the user's (providers change theirs, a local server costs nothing per token);
the bill of an audit (:mod:`judgeprobe.audit.billing`) multiplies the tokens it plans by it.

Two discounts apply to a provider's list prices, and the bill takes both:

- **Prompt caching.** A provider that caches prompts (OpenAI, Anthropic, Gemini, vLLM) charges
  less for the leading tokens a prompt shares with one it saw shortly before. The engine sends
  requests in :func:`~judgeprobe.engine.ordering.warm_order` (each after the one it shares the
  longest prefix with) and every built-in rubric puts its static text before the item, so a
  probe's requests share their opening. A shared prefix is billed at ``cached_input_per_mtok``
  from ``cache_min_tokens`` on (OpenAI's caches start at 1,024 tokens), in whole blocks of
  ``cache_block_tokens`` (128 there). Without a ``cached_input_per_mtok`` every prompt token is
  billed at the input price.
- **Batch.** An audit through the ``openai-batch`` executor is billed at ``batch_price_factor``
  of the prices (OpenAI's Batch API: half).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Pricing(BaseModel):
    """Price per million input (prompt), cached input and output (completion) tokens.

    Examples
    --------
    >>> Pricing(input_per_mtok=0.4, output_per_mtok=1.6).cost(1_000_000, 10_000)
    0.416
    >>> prices = Pricing(input_per_mtok=2.5, cached_input_per_mtok=1.25, output_per_mtok=10)
    >>> prices.cost(1_000_000, 0, cached_tokens=400_000)
    2.0
    >>> prices.cost(1_000_000, 0, cached_tokens=400_000, batch=True)
    1.0
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(default=0.0, ge=0)
    cached_input_per_mtok: float | None = Field(default=None, ge=0)
    """The price of a prompt token read from the provider's prompt cache; None: no discount."""
    cache_min_tokens: int = Field(default=1024, ge=0)
    """The shortest shared prefix the provider caches."""
    cache_block_tokens: int = Field(default=128, ge=1)
    """A cached prefix counts in whole blocks of this many tokens."""
    batch_price_factor: float = Field(default=0.5, ge=0, le=1)
    """The share of the prices a provider's Batch API charges (the ``openai-batch`` executor)."""
    currency: str = "USD"

    def cached(self, shared_tokens: int) -> int:
        """The tokens of a ``shared_tokens``-long shared prefix that the cache bills.

        >>> Pricing(input_per_mtok=1).cached(1000), Pricing(input_per_mtok=1).cached(1300)
        (0, 1280)
        """
        if shared_tokens < max(1, self.cache_min_tokens):
            return 0
        return shared_tokens // self.cache_block_tokens * self.cache_block_tokens

    def cost(
        self,
        prompt_tokens: int,
        completion_tokens: int,
        *,
        cached_tokens: int = 0,
        batch: bool = False,
    ) -> float:
        """The price of ``prompt_tokens`` in (``cached_tokens`` of them from the cache) and
        ``completion_tokens`` out, through the Batch API when ``batch``."""
        cached_price = self.cached_input_per_mtok
        cached = min(cached_tokens, prompt_tokens) if cached_price is not None else 0
        total = (
            (prompt_tokens - cached) * self.input_per_mtok
            + cached * (cached_price or 0.0)
            + completion_tokens * self.output_per_mtok
        )
        factor = self.batch_price_factor if batch else 1.0
        return round(total * factor / 1e6, 6)
