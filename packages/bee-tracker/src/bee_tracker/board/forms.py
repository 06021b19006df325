"""Reading a board form: ``application/x-www-form-urlencoded`` only, bounded in bytes and fields, strict UTF-8.

The board's forms are plain HTML forms; nothing else is accepted (a multipart upload or JSON body is refused), and
a body is read only up to :data:`MAX_FORM_BYTES`, so a huge POST costs the server no more than that.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from starlette.requests import Request

from bee_tracker.board.base import BoardError

#: Largest form body read, in bytes: a 64 KiB-character description percent-encoded is at most 768 KiB.
MAX_FORM_BYTES = 1024 * 1024
#: Most fields a board form has (with room to spare).
MAX_FIELDS = 32


async def read_form(request: Request) -> dict[str, str]:
    """The fields of the request's form (the last value of a repeated field wins).

    Raises:
        BoardError: 415 for another content type; 413 for a body over :data:`MAX_FORM_BYTES`; 400 for a body that is
            not valid percent-encoded UTF-8 or has more than :data:`MAX_FIELDS` fields.
    """
    content_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if content_type != "application/x-www-form-urlencoded":
        raise BoardError(415, "the board accepts only its own HTML forms (application/x-www-form-urlencoded)")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_FORM_BYTES:
        raise BoardError(413, f"the form is larger than {MAX_FORM_BYTES // 1024} KiB; shorten the text")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise BoardError(413, f"the form is larger than {MAX_FORM_BYTES // 1024} KiB; shorten the text")
    try:
        fields = parse_qsl(
            body.decode("ascii"), keep_blank_values=True, max_num_fields=MAX_FIELDS, encoding="utf-8", errors="strict"
        )
    except (UnicodeDecodeError, ValueError):
        raise BoardError(400, "the form could not be read (not URL-encoded UTF-8, or too many fields)") from None
    return dict(fields)
