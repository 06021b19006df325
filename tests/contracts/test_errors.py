"""The error envelope read back by a client of a Bee host (bee_contracts.errors.from_envelope)."""

from __future__ import annotations

import json

from bee_contracts import BeeError, ErrorCode


def test_an_envelope_read_back_is_the_failure_it_carried_and_anything_else_is_internal() -> None:
    from bee_contracts.errors import from_envelope

    sent = BeeError(ErrorCode.CONFLICT, "held by ann", details={"holder": "ann"}, outcome_unknown=True)
    back = from_envelope(json.dumps(sent.body()), unreadable="unreadable")
    assert (back.code, back.message, back.details, back.retryable, back.outcome_unknown) == (
        ErrorCode.CONFLICT,
        "held by ann",
        {"holder": "ann"},
        sent.retryable,
        True,
    )
    for text in ["", "not json", "[]", '{"code": "no_such_code", "error": "x"}', '{"error": "no code"}']:
        failed = from_envelope(text, unreadable="the tracker failed get without a readable error")
        assert failed.code is ErrorCode.INTERNAL and "without a readable error" in failed.message
