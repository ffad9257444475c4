"""A stub of the OpenAI Files and Batches API, answering as the chat stub of fake_server.py does.

It serves ``POST /v1/files``, ``GET /v1/files/{id}/content``, ``POST /v1/batches`` and
``GET /v1/batches/{id}``, plus ``POST /v1/chat/completions`` for live calls. Each line of a batch
is answered by :class:`fake_server.FakeServer` from its body, exactly as a live call with that
body would be: an audit through a batch and a live audit against one stub see the same labels.

A batch stays ``in_progress`` for ``polls`` retrievals, then ends. Lines whose ``custom_id`` is in
``failing`` go to the error file (HTTP 500); with ``expire_after`` set the batch ends ``expired``
with only that many lines answered (the others in the error file, code ``batch_expired``); with
``final="failed"`` it ends failed with no output. The counters (``uploads``, ``created``,
``retrievals``, ``batch_lines``) let tests check that a resumed run made no new batch.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from aiohttp import web

from fake_server import FakeServer


class BatchServer(FakeServer):
    """The chat stub with a Files and Batches API."""

    def __init__(
        self,
        *,
        polls: int = 1,
        failing: Iterable[str] = (),
        expire_after: int | None = None,
        final: str = "completed",
        flaky: int = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.polls = polls
        self.failing = set(failing)
        self.expire_after = expire_after
        self.final = final
        self.flaky = flaky
        """The first ``flaky`` retrievals of a batch answer HTTP 503."""
        self.files: dict[str, bytes] = {}
        self.jobs: dict[str, dict[str, Any]] = {}
        self.uploads = 0
        self.created = 0
        self.retrievals = 0
        self.batch_lines = 0
        """Lines answered in batches (``calls`` counts the live chat calls only)."""

    def app(self) -> web.Application:
        app = super().app()
        app.router.add_post("/v1/files", self._upload)
        app.router.add_get("/v1/files/{id}/content", self._content)
        app.router.add_post("/v1/batches", self._create)
        app.router.add_get("/v1/batches/{id}", self._retrieve)
        return app

    async def _upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form.get("file")
        if form.get("purpose") != "batch" or not isinstance(upload, web.FileField):
            return web.json_response({"error": {"message": "purpose=batch and a file"}}, status=400)
        self.uploads += 1
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = upload.file.read()
        return web.json_response({"id": file_id, "object": "file", "purpose": "batch"})

    async def _content(self, request: web.Request) -> web.Response:
        content = self.files.get(request.match_info["id"])
        if content is None:
            return web.json_response({"error": {"message": "no such file"}}, status=404)
        return web.Response(body=content, content_type="application/jsonl")

    async def _create(self, request: web.Request) -> web.Response:
        body = await request.json()
        if body.get("input_file_id") not in self.files:
            return web.json_response({"error": {"message": "no such input file"}}, status=400)
        self.created += 1
        batch_id = f"batch_{self.created}"
        self.jobs[batch_id] = {
            "id": batch_id,
            "object": "batch",
            "endpoint": body.get("endpoint"),
            "input_file_id": body["input_file_id"],
            "completion_window": body.get("completion_window"),
            "status": "validating",
            "output_file_id": None,
            "error_file_id": None,
            "_polls": 0,
        }
        return web.json_response(self._public(batch_id))

    async def _retrieve(self, request: web.Request) -> web.Response:
        batch_id = request.match_info["id"]
        job = self.jobs.get(batch_id)
        if job is None:
            return web.json_response({"error": {"message": "no such batch"}}, status=404)
        self.retrievals += 1
        if self.retrievals <= self.flaky:
            return web.json_response({"error": {"message": "try again"}}, status=503)
        if job["status"] in ("validating", "in_progress"):
            job["_polls"] += 1
            job["status"] = "in_progress"
            if job["_polls"] > self.polls:
                self._finish(job)
        return web.json_response(self._public(batch_id))

    def _public(self, batch_id: str) -> dict[str, Any]:
        return {k: v for k, v in self.jobs[batch_id].items() if not k.startswith("_")}

    def _finish(self, job: dict[str, Any]) -> None:
        if self.final == "failed":
            job["status"] = "failed"
            job["errors"] = {"data": [{"code": "invalid_request", "message": "stub failure"}]}
            return
        lines = self.files[job["input_file_id"]].decode().splitlines()
        answered = lines if self.expire_after is None else lines[: self.expire_after]
        output, errors = [], []
        for n, text in enumerate(answered):
            line = json.loads(text)
            custom_id = line["custom_id"]
            raw = json.dumps(line["body"]).encode()
            if custom_id in self.failing:
                errors.append(
                    {
                        "id": f"batch_req_{n}",
                        "custom_id": custom_id,
                        "response": {
                            "status_code": 500,
                            "request_id": f"req_{n}",
                            "body": {"error": {"message": "stub server error"}},
                        },
                        "error": None,
                    }
                )
                continue
            key = self.key_of(raw)
            self.batch_lines += 1
            body = self._completion(line["body"], key)
            output.append(
                {
                    "id": f"batch_req_{n}",
                    "custom_id": custom_id,
                    "response": {"status_code": 200, "request_id": f"req_{n}", "body": body},
                    "error": None,
                }
            )
        for n, text in enumerate(lines[len(answered) :], start=len(answered)):
            errors.append(  # as OpenAI lists the requests an expired batch never ran
                {
                    "id": f"batch_req_{n}",
                    "custom_id": json.loads(text)["custom_id"],
                    "response": None,
                    "error": {
                        "code": "batch_expired",
                        "message": "This request could not be "
                        "executed before the completion window expired.",
                    },
                }
            )
        job["status"] = "completed" if self.expire_after is None else "expired"
        for name, rows in (("output_file_id", output), ("error_file_id", errors)):
            if rows:
                file_id = f"file-{len(self.files) + 1}"
                self.files[file_id] = "".join(json.dumps(r) + "\n" for r in rows).encode()
                job[name] = file_id
