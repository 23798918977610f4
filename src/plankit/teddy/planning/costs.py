"""What model answers cost, and the guard that keeps ``teddy run`` within its limits.

Prices come from the ``prices`` setting of ``.teddy/config.yaml`` (USD per million
input and output tokens) when it names the model, else from genai-prices' bundled,
maintained table (no network).  :class:`GuardedPlanner` wraps a planner: before each
model call it checks the turn and cost limits, after it adds the answer's usage and
cost to the :class:`Spend`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from plankit.errors import InputError

if TYPE_CHECKING:
    from plankit.teddy.planning.models import Answer, Planner, PlanRequest
    from plankit.teddy.session.config import Config


class UnknownPrice(InputError):
    """A cost limit was asked for a model whose price is unknown."""


class LimitReached(Exception):
    """A limit of ``teddy run`` was reached before a model call; ``reason`` says which."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def price_per_million(model: str, config: Config) -> tuple[float, float]:
    """USD per million input and output tokens of ``model`` (config first, then
    genai-prices); raises :class:`UnknownPrice` when neither knows it."""
    for name, input_price, output_price in config.prices:
        if name == model:
            return input_price, output_price
    try:
        from genai_prices import Usage, calc_price
    except ImportError:
        raise UnknownPrice(
            f"the price of model '{model}' is not in config.yaml, and the price table needs "
            "the models extra: pip install 'plankit[models]' (or add the model to config.yaml "
            f"as prices: {{{model}: {{input: USD, output: USD}}}})",
            code="missing-extra",
        ) from None
    try:
        million = 1_000_000
        found = calc_price(Usage(input_tokens=million, output_tokens=0), model)
        output = calc_price(Usage(input_tokens=0, output_tokens=million), model)
    except (LookupError, ValueError):
        raise UnknownPrice(
            f"the price of model '{model}' is unknown: add it to config.yaml as "
            f"prices: {{{model}: {{input: USD, output: USD}}}} (per million tokens)",
            code="unknown-price",
        ) from None
    return float(found.total_price), float(output.total_price)


@dataclass(slots=True)
class Spend:
    """What the model calls of a run used so far."""

    calls: int = 0
    """Model calls."""
    input_tokens: int = 0
    """Tokens read, as reported."""
    output_tokens: int = 0
    """Tokens written, as reported."""
    cost: float = 0.0
    """USD, from the prices (0 when no price is known)."""

    def as_json(self) -> dict[str, object]:
        """The figures for ``--json`` events."""
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": round(self.cost, 6),
        }


@dataclass(frozen=True, slots=True)
class Limits:
    """``teddy run``'s guardrails (None: no limit)."""

    max_turns: int | None = None
    """Turns planned by the model (re-plans included)."""
    max_cost: float | None = None
    """USD spent on model calls."""


class GuardedPlanner:
    """A planner that refuses to call its model once a limit is reached."""

    def __init__(
        self, inner: Planner, limits: Limits, spend: Spend, prices: tuple[float, float] | None
    ) -> None:
        self.inner = inner
        self.limits = limits
        self.spend = spend
        self.prices = prices

    @property
    def name(self) -> str:
        """The inner planner's name."""
        return self.inner.name

    def check(self) -> None:
        """Raise :class:`LimitReached` when the next model call would go past a limit."""
        limits, spend = self.limits, self.spend
        if limits.max_turns is not None and spend.calls >= limits.max_turns:
            raise LimitReached(
                "max_turns", f"the turn limit is reached ({spend.calls} of {limits.max_turns})"
            )
        if limits.max_cost is not None and spend.cost >= limits.max_cost:
            raise LimitReached(
                "max_cost",
                f"the cost limit is reached (${spend.cost:.4f} of ${limits.max_cost:.4f})",
            )

    def answer(self, request: PlanRequest) -> Answer:
        """Check the limits, ask the model, count what it used."""
        self.check()
        answer = self.inner.answer(request)
        spend = self.spend
        spend.calls += 1
        usage = answer.usage
        if usage is not None:
            spend.input_tokens += usage.input_tokens or 0
            spend.output_tokens += usage.output_tokens or 0
            if self.prices is not None:
                per_in, per_out = self.prices
                spend.cost += (
                    (usage.input_tokens or 0) * per_in + (usage.output_tokens or 0) * per_out
                ) / 1_000_000
        return answer
