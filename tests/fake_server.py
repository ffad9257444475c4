"""A fault-injecting OpenAI-compatible chat-completions stub, for tests and benchmarks.

It answers ``POST /v1/chat/completions`` after a fixed latency with a deterministic label (picked by
a hash of the request body), with next-token logprobs when asked, and a PyRIT-style JSON
object when the request asks for JSON. A seeded fault mix turns a share of calls into a 429 with
``Retry-After``, a 500, a timeout (the server sleeps past the client's timeout and never answers)
or a garbage body; which call fails depends only on the seed, the request's content and how many
times that content arrived, never on arrival order, so a concurrent run is reproducible.

With ``echo_credentials`` it plays a careless server that repeats the credentials it was sent (the
Authorization header, basic-auth user and password, any request field outside the chat API) in
every answer and every error message, for tests that check no secret is written anywhere.

The server counts every call per request content (``received``) and every good answer
(``answered``), so tests can check that no finished call was repeated. ``GET /stats`` returns the
counters as JSON. It depends on aiohttp and the standard library only, so a benchmark can run it
in its own process::

    python tests/fake_server.py --latency 0.05 --port 0     # prints "READY <base_url>"
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import hashlib
import json
import math
import signal
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

FAULTS = ("429", "500", "timeout", "garbage")


@dataclass(frozen=True)
class FaultMix:
    """Probabilities of each fault per call (their sum is the fault rate), and their details."""

    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_timeout: float = 0.0
    rate_garbage: float = 0.0
    retry_after: str = "1"
    """The ``Retry-After`` header sent with a 429."""
    timeout_sleep_s: float = 30.0
    """How long a timed-out call hangs before the server drops it (beyond the client timeout)."""
    seed: int = 0

    @classmethod
    def even(cls, rate: float, **kwargs: Any) -> FaultMix:
        """``rate`` split evenly over the four faults."""
        share = rate / 4
        return cls(share, share, share, share, **kwargs)

    @property
    def rate(self) -> float:
        return self.rate_429 + self.rate_500 + self.rate_timeout + self.rate_garbage

    def pick(self, key: str, arrival: int) -> str | None:
        """The fault for the ``arrival``-th call of content ``key`` (None: answer normally)."""
        if self.rate <= 0:
            return None
        digest = hashlib.blake2b(f"{self.seed}:{key}:{arrival}".encode(), digest_size=8).digest()
        u = int.from_bytes(digest, "big") / 2**64
        for name, rate in zip(
            FAULTS,
            (self.rate_429, self.rate_500, self.rate_timeout, self.rate_garbage),
            strict=True,
        ):
            if u < rate:
                return name
            u -= rate
        return None


@dataclass
class Scripted:
    """One queued reply that overrides the next call (for backend tests)."""

    status: int
    body: bytes | str | dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


class FakeServer:
    """The stub server; run it with :meth:`start`/:meth:`stop` in a loop or :func:`serve_in_thread`.

    Parameters
    ----------
    latency_s : fixed delay before each answer (the "L" of the throughput benchmark).
    faults : the fault mix.
    labels : the labels it answers with; a call's label is ``labels[hash(body) % len]``.
    confidence : probability of the chosen label in the logprobs (the rest share the remainder).
    echo_credentials : repeat the credentials of each call in its answer's text and error messages.
    decide : a planted judge: the label to answer, given the request body (the chat messages);
        None answers ``labels[hash(body) % len]``.
    """

    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        faults: FaultMix | None = None,
        labels: Sequence[str] = ("true", "false"),
        confidence: float = 0.75,
        model: str = "stub-judge",
        echo_credentials: bool = False,
        decide: Callable[[dict[str, Any]], str] | None = None,
    ) -> None:
        self.latency_s = latency_s
        self.faults = faults or FaultMix()
        self.labels = tuple(labels)
        self.confidence = confidence
        self.model = model
        self.echo_credentials = echo_credentials
        self.decide = decide
        self.received: Counter[str] = Counter()
        self.answered: Counter[str] = Counter()
        self.fault_counts: Counter[str] = Counter()
        self.bodies: deque[dict[str, Any]] = deque(maxlen=64)
        self.authorizations: deque[str | None] = deque(maxlen=64)
        self.answers: deque[str] = deque(maxlen=64)
        """The labels of the last good answers, in order."""
        self.arrivals: list[float] = []
        """The ``time.monotonic()`` at which each call arrived, in order."""
        self.script: deque[Scripted] = deque()
        self.base_url = ""
        self._runner: web.AppRunner | None = None
        self._closing: asyncio.Event | None = None

    # -- lifecycle ----------------------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application(client_max_size=16 * 2**20)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/stats", self._stats)
        return app

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Start listening; returns the base URL (``http://host:port/v1``)."""
        self._closing = asyncio.Event()
        self._runner = web.AppRunner(
            self.app(), access_log=None, handle_signals=False, shutdown_timeout=0.5
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, backlog=1024)
        await site.start()
        server = site._server
        assert server is not None
        bound = server.sockets[0].getsockname()  # type: ignore[attr-defined]
        self.base_url = f"http://{host}:{bound[1]}/v1"
        return self.base_url

    async def stop(self) -> None:
        if self._closing is not None:
            self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # -- counters -----------------------------------------------------------------------------
    @property
    def calls(self) -> int:
        return sum(self.received.values())

    def stats(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "answered": sum(self.answered.values()),
            "faults": dict(self.fault_counts),
            "received": dict(self.received),
            "answered_by_key": dict(self.answered),
        }

    @staticmethod
    def key_of(raw: bytes) -> str:
        """The identity of a call: a hash of its body (equal requests send equal bodies)."""
        return hashlib.blake2b(raw, digest_size=12).hexdigest()

    def label_for(self, key: str) -> str:
        """The label this server answers for the call with identity ``key`` (deterministic)."""
        return self.labels[int(key, 16) % len(self.labels)]

    # -- handlers -----------------------------------------------------------------------------
    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": self.model}]})

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats())

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        self.arrivals.append(time.monotonic())
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            return web.json_response({"error": {"message": "body is not JSON"}}, status=400)
        self.bodies.append(body)
        self.authorizations.append(request.headers.get("Authorization"))
        key = self.key_of(raw)
        arrival = self.received[key]
        self.received[key] += 1
        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)
        if self.script:
            reply = self.script.popleft()
            return _scripted(reply)
        echo = _credentials(request, body) if self.echo_credentials else ""
        fault = self.faults.pick(key, arrival)
        if fault is not None:
            self.fault_counts[fault] += 1
            return await self._fault(fault, echo)
        self.answered[key] += 1
        return web.Response(
            body=json.dumps(self._completion(body, key, echo)).encode(),
            content_type="application/json",
        )

    async def _fault(self, fault: str, echo: str = "") -> web.StreamResponse:
        if fault == "429":
            return web.json_response(
                {"error": {"message": f"rate limit reached{echo}", "type": "rate_limit"}},
                status=429,
                headers={"Retry-After": self.faults.retry_after},
            )
        if fault == "500":
            return web.json_response({"error": {"message": f"internal error{echo}"}}, status=500)
        if fault == "garbage":
            return web.Response(body=b'{"choices": [{"mess<html>', content_type="application/json")
        assert self._closing is not None
        with contextlib.suppress(TimeoutError):  # hang past the client's timeout, never answer
            await asyncio.wait_for(self._closing.wait(), self.faults.timeout_sleep_s)
        return web.json_response({"error": {"message": "gateway timeout"}}, status=504)

    def _completion(self, body: dict[str, Any], key: str, echo: str = "") -> dict[str, Any]:
        label = self.label_for(key) if self.decide is None else self.decide(body)
        self.answers.append(label)
        messages = body.get("messages") or [{}]
        system = next((m.get("content", "") for m in messages if m.get("role") == "system"), "")
        user = str(messages[-1].get("content", ""))
        wants_json = "response_format" in body or "score_value" in str(system)
        if wants_json:
            value = label.lower() in ("true", "yes", "1")
            text = json.dumps({"score_value": value, "rationale": "stub rationale"})
            tokens = [text]
        else:
            prefix = _requested_prefix(user)
            tokens = [*([prefix, " "] if prefix else []), label]
            text = "".join(tokens)
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": text + echo},
            "finish_reason": "stop",
        }
        if body.get("logprobs") and not wants_json:
            choice["logprobs"] = {"content": self._logprobs(tokens, label, body)}
        return {
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", self.model),
            "choices": [choice],
            "usage": {
                "prompt_tokens": len(user) // 4,
                "completion_tokens": len(tokens),
                "total_tokens": len(user) // 4 + len(tokens),
            },
        }

    def _logprobs(
        self, tokens: list[str], label: str, body: dict[str, Any]
    ) -> list[dict[str, Any]]:
        top = int(body.get("top_logprobs") or 1)
        others = [lab for lab in self.labels if lab != label]
        rest = (1.0 - self.confidence) / max(1, len(others))
        entries = []
        for token in tokens:
            if token == label:
                alternatives = [(label, self.confidence), *((o, rest) for o in others)]
            else:
                alternatives = [(token, 1.0)]
            top_list = [
                {"token": t, "logprob": math.log(p), "bytes": None} for t, p in alternatives[:top]
            ]
            entries.append(
                {
                    "token": token,
                    "logprob": top_list[0]["logprob"],
                    "bytes": None,
                    "top_logprobs": top_list,
                }
            )
        return entries


_CHAT_FIELDS = frozenset(
    {"model", "messages", "temperature", "max_tokens", "seed", "logprobs", "top_logprobs"}
)


def _credentials(request: web.Request, body: dict[str, Any]) -> str:
    """What a careless server would repeat back: the credentials and unknown fields of a call."""
    authorization = request.headers.get("Authorization", "")
    parts = [authorization] if authorization else []
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() == "basic":
        parts.append(base64.b64decode(value).decode("utf-8", "replace"))
    parts += [f"{name}={body[name]}" for name in sorted(body) if name not in _CHAT_FIELDS]
    return f" (you sent: {'; '.join(parts)})" if parts else ""


def _requested_prefix(user: str) -> str:
    marker = 'Begin your answer with "'
    start = user.rfind(marker)
    if start < 0:
        return ""
    start += len(marker)
    end = user.find('"', start)
    return user[start:end] if end > start else ""


def _scripted(reply: Scripted) -> web.Response:
    body = reply.body
    if isinstance(body, dict):
        data = json.dumps(body).encode()
    elif isinstance(body, str):
        data = body.encode()
    else:
        data = body
    return web.Response(
        status=reply.status, body=data, headers=reply.headers, content_type="application/json"
    )


@contextmanager
def serve_in_thread(server: FakeServer) -> Iterator[FakeServer]:
    """Run ``server`` on its own event loop in a daemon thread (for sync tests)."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.start())
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    if not ready.wait(10):
        raise RuntimeError("the fake server did not start")
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def main(argv: Sequence[str] | None = None) -> None:
    """Serve until SIGTERM/SIGINT; print ``READY <base_url>`` once listening."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per answer")
    parser.add_argument("--fault-rate", type=float, default=0.0, help="split over 4 faults")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    async def serve() -> None:
        server = FakeServer(
            latency_s=args.latency, faults=FaultMix.even(args.fault_rate, seed=args.seed)
        )
        url = await server.start(args.host, args.port)
        print(f"READY {url}", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        await server.stop()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
