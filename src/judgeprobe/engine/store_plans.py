"""The plans of a run store: each probe's plan, its design and its requests by role.

A plan is stored whole with its run (schema 3 and later), so a run can be analysed again from
the store alone (:func:`judgeprobe.runs.probe.reanalyze`). :class:`PlanStore` holds the
:class:`~judgeprobe.engine.store.RunStore` methods that write and read the ``plans`` and
``plan_roles`` tables; the store's connection, redaction and error handling stay in the store.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from judgeprobe._util import codec as _codec
from judgeprobe._util.hashing import canonical_json
from judgeprobe._util.redaction import REDACTED
from judgeprobe.core.plan import Plan, ProbeContext, Role, check_role
from judgeprobe.core.request import Request
from judgeprobe.engine.store_base import StoreBase
from judgeprobe.rubrics import Rubric

PLANS_SCHEMA = """
CREATE TABLE IF NOT EXISTS plans (
    run_id INTEGER NOT NULL,
    probe TEXT NOT NULL,
    stage INTEGER NOT NULL,
    context TEXT NOT NULL,
    design TEXT NOT NULL,
    PRIMARY KEY (run_id, probe)
);
CREATE TABLE IF NOT EXISTS plan_roles (
    run_id INTEGER NOT NULL,
    probe TEXT NOT NULL,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    key TEXT NOT NULL,
    judge TEXT NOT NULL,
    rubric TEXT NOT NULL,
    trial INTEGER NOT NULL,
    fields TEXT NOT NULL,
    PRIMARY KEY (run_id, probe, seq)
);
"""
"""The tables of the plans: one row per probe and run, one per request and role."""


class PlanStore(StoreBase):
    """The plan methods of :class:`~judgeprobe.engine.store.RunStore` (a mixin)."""

    if TYPE_CHECKING:  # provided by RunStore

        def register_rubric(self, rubric: Rubric) -> None: ...

        def rubrics(self) -> dict[str, Rubric]: ...

    def put_plan(self, run_id: int, name: str, plan: Plan[Any]) -> None:
        """Store the complete plan of probe ``name`` in run ``run_id``, in one transaction.

        The design and context go in as design JSON (:mod:`judgeprobe._util.codec`), each request
        under its role; :meth:`plan` reads them back, so the run can be analysed again from
        this file alone (:func:`judgeprobe.runs.probe.reanalyze`).
        """
        for request in plan.requests.values():
            self.register_rubric(request.rubric)
        roles = [
            (
                run_id,
                name,
                seq,
                canonical_json(list(role)),
                request.key,
                request.judge,
                request.rubric.hash,
                request.trial,
                canonical_json([(f, self.redactor.text(t)) for f, t in request.fields]),
            )
            for seq, (role, request) in enumerate(plan.requests.items())
        ]
        head = (
            run_id,
            name,
            plan.stage,
            self.redactor.text(_codec.dumps(plan.context)),
            self.redactor.text(_codec.dumps(plan.design)),
        )
        self._transaction(
            [
                ("DELETE FROM plan_roles WHERE run_id = ? AND probe = ?", head[:2]),
                ("INSERT OR REPLACE INTO plans VALUES (?, ?, ?, ?, ?)", head),
            ],
            [("INSERT INTO plan_roles VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", roles)],
        )

    def plan(self, run_id: int, name: str) -> Plan[Any] | None:
        """The plan of probe ``name`` stored with run ``run_id``; None when none was stored
        (a run by an older judgeprobe, or one stopped before the probe finished)."""
        rows = self._rows(
            "SELECT probe, stage, context, design FROM plans WHERE run_id = ? AND probe = ?",
            (run_id, name),
        )
        if not rows:
            return None
        probe, stage, context_text, design_text = rows[0]
        what = f"the plan of probe {name!r} in run {run_id}"
        try:
            context = _codec.decode(_codec.loads(context_text))
            design = _codec.decode(_codec.loads(design_text))
        except (_codec.CodecError, TypeError, ValueError) as exc:
            raise self._damaged(what, exc) from exc
        if not isinstance(context, ProbeContext) or not isinstance(stage, int):
            raise self._damaged(what, TypeError("no probe context or stage"))
        rubrics = self.rubrics()
        requests: dict[Role, Request] = {}
        for role_text, key, judge, rubric_hash, trial, fields_text in self._rows(
            "SELECT role, key, judge, rubric, trial, fields FROM plan_roles "
            "WHERE run_id = ? AND probe = ? ORDER BY seq",
            (run_id, name),
        ):
            try:
                role = tuple(json.loads(role_text))
                check_role(role)
                fields = tuple((str(f), str(t)) for f, t in json.loads(fields_text))
                request = Request(str(judge), rubrics[str(rubric_hash)], fields, int(trial))
            except (TypeError, ValueError, KeyError) as exc:
                raise self._damaged(f"{what}, role {role_text}", exc) from exc
            if request.key != key and _redacted(fields):
                # the store redacted a secret-looking text from the fields: the key is the one
                # the request was judged under, and its verdict is stored under it
                object.__setattr__(request, "key", str(key))
            if request.key != key:
                raise self._damaged(
                    f"{what}, role {role_text}",
                    ValueError(f"its request hashes to {request.key}, not to {key}"),
                )
            requests[role] = request
        return Plan(str(probe), context, design, requests, stage)


def _redacted(fields: tuple[tuple[str, str], ...]) -> bool:
    """Whether the store's redactor replaced part of a field's text when it was written."""
    return any(REDACTED in text for _, text in fields)
