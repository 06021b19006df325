"""The one lexical ranking: how well a short query matches a few weighted text fields.

Used wherever a host ranks its own small catalogs by words (skills by name and description, tools in the
discovery view). It is deliberately simple and explainable: the score is the share of the query's words found,
each counted once at the weight of the best field it is found in, so 1.0 means every word is in the heaviest field.
A word matches a word of the field exactly, or as its prefix when it is at least :data:`MIN_PREFIX` characters long
(``search`` finds ``searching``), at half weight.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: Query words shorter than this match whole words only.
MIN_PREFIX = 3

#: Words that say nothing about which entry is meant; a query of nothing else matches nothing.
STOP_WORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "in",
        "is",
        "it",
        "me",
        "my",
        "of",
        "on",
        "or",
        "the",
        "this",
        "to",
        "use",
        "what",
        "when",
        "with",
    }
)

_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> list[str]:
    """The lower-cased words of ``text`` (runs of letters and digits), in order, each once."""
    return list(dict.fromkeys(_WORD.findall(text.lower())))


def query_words(query: str) -> list[str]:
    """The words of ``query`` that can tell entries apart (stop words dropped)."""
    return [word for word in words(query) if word not in STOP_WORDS]


def score(query: Sequence[str], fields: Sequence[tuple[str, float]]) -> float:
    """How well ``query`` (from :func:`query_words`) matches ``fields`` (text, weight), from 0.0 to 1.0.

    Rounded to three places so that equal scores compare equal and ties fall to the caller's order.
    """
    if not query or not fields:
        return 0.0
    field_words = [(set(words(text)), weight) for text, weight in fields]
    heaviest = max(weight for _, weight in fields)
    total = 0.0
    for term in query:
        best = 0.0
        for found, weight in field_words:
            if term in found:
                best = max(best, weight)
            elif len(term) >= MIN_PREFIX and any(word.startswith(term) for word in found):
                best = max(best, weight / 2)
        total += best
    return round(total / (len(query) * heaviest), 3)
