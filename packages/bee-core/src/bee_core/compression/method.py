"""The local prose compression method ``extractive-wordfreq-v1``: sentence selection, then word pruning.

1. The text is cut into units: fenced code blocks (whole), headings and list items (one line each), and the
   sentences of ordinary paragraphs.
2. Each unit is scored by how much of the document's recurring, informative vocabulary it carries (a word's
   information is ``-log p`` under the English word frequencies of the ``wordfreq`` package, which ship in its
   wheel), with a bonus for headings, paragraph openings and units carrying numbers or identifiers. Units are
   taken best-first, skipping near-duplicates, until the selection holds the share of tokens that leaves room
   for pruning; the selection keeps document order.
3. The most predictable words (the, of, that, …) of the selected units are removed until the target is met,
   at most a bounded share of any unit, never the first word of a unit, and never a negation, quantifier or
   modal (not, no, all, must, …) whose loss would flip the meaning.

Numbers, identifiers (snake_case, camelCase, dotted or slashed names, ALLCAPS), capitalised names, code,
URLs, e-mail addresses and quoted strings are never altered: a unit is kept or left out whole around them.
The method is deterministic and runs offline; it is lossy, and tuned for English.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

METHOD = "extractive-wordfreq-v1"

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
_PROTECTED = re.compile(
    r"`[^`\n]+`"  # inline code
    r'|"[^"\n]{1,400}"|“[^”\n]{1,400}”|«[^»\n]{1,400}»'  # quoted strings
    r"|\b[a-z][a-z0-9+.-]*://\S+"  # URLs
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # e-mail addresses
)
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]”’]*\s+(?=[\"'(\[“‘]?[A-Z0-9])")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "Mr.", "Mrs.", "Ms.", "Dr.", "St.", "No.", "Fig.", "al.")
_LINE_UNIT = re.compile(r"^\s*(?:#{1,6}\s|[-*+]\s|\d+[.)]\s|>\s|\|)")
_PRUNABLE = re.compile(r"[a-z]+(?:['’][a-z]+)?")
#: Words whose removal changes what a sentence says, however common they are.
_KEEP = frozenset(
    {
        "not",
        "no",
        "nor",
        "never",
        "none",
        "nothing",
        "neither",
        "without",
        "cannot",
        "can't",
        "don't",
        "doesn't",
        "didn't",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
        "won't",
        "wouldn't",
        "shouldn't",
        "couldn't",
        "mustn't",
        "hasn't",
        "haven't",
        "hadn't",
        "only",
        "all",
        "any",
        "every",
        "each",
        "some",
        "few",
        "more",
        "most",
        "less",
        "least",
        "must",
        "should",
        "may",
        "might",
        "can",
        "could",
        "will",
        "would",
        "shall",
        "before",
        "after",
        "if",
        "unless",
        "until",
        "because",
        "but",
        "or",
        "than",
        "then",
        "also",
        "except",
        "instead",
        "both",
        "either",
        "first",
        "last",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "hundred",
        "thousand",
        "million",
        "billion",
        "second",
        "third",
        "half",
        "twice",
        "once",
    }
)
#: Words at least this common (Zipf scale) may be pruned; rarer ones carry the content.
_PRUNE_ZIPF = 5.5
#: Words this common or more are not content words when scoring units.
_FUNCTION_ZIPF = 5.2


@dataclass
class _Unit:
    text: str
    paragraph: int
    first_in_paragraph: bool
    line: bool  # a heading, list item or code block: joined to its neighbours with a newline
    code: bool = False
    tokens: int = 0
    score: float = 0.0
    content: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
class Compressed:
    """The method's output and its token counts (o200k)."""

    text: str
    input_tokens: int
    output_tokens: int


def _zipf() -> Callable[[str], float]:
    from wordfreq import zipf_frequency

    return lambda word: float(zipf_frequency(word, "en"))


def _split_sentences(paragraph: str) -> list[str]:
    masked = paragraph
    for abbreviation in _ABBREVIATIONS:  # keep "e.g. Foo" in one sentence
        masked = masked.replace(abbreviation + " ", abbreviation.replace(".", "\x00") + " ")
    for match in _PROTECTED.finditer(paragraph):  # never cut inside a protected span
        masked = masked[: match.start()] + "\x01" * (match.end() - match.start()) + masked[match.end() :]
    cuts = [0] + [m.end() for m in _SENTENCE_END.finditer(masked)] + [len(paragraph)]
    return [paragraph[a:b].strip() for a, b in itertools.pairwise(cuts) if paragraph[a:b].strip()]


def _units(text: str) -> list[_Unit]:
    units: list[_Unit] = []
    position = 0
    blocks: list[tuple[str, bool]] = []
    for match in _FENCE.finditer(text):
        blocks.append((text[position : match.start()], False))
        blocks.append((match.group(), True))
        position = match.end()
    blocks.append((text[position:], False))
    paragraph = 0
    for block, is_code in blocks:
        if is_code:
            units.append(_Unit(block, paragraph, True, True, code=True))
            paragraph += 1
            continue
        for chunk in re.split(r"\n\s*\n", block):
            if not chunk.strip():
                continue
            first = True
            lines = chunk.split("\n")
            if any(_LINE_UNIT.match(line) for line in lines):
                for line in lines:
                    if line.strip():
                        units.append(_Unit(line.rstrip(), paragraph, first, True))
                        first = False
            else:
                for sentence in _split_sentences(" ".join(line.strip() for line in lines)):
                    units.append(_Unit(sentence, paragraph, first, False))
                    first = False
            paragraph += 1
    return units


def _protected_words(text: str) -> int:
    """How many numbers, identifiers and names a unit carries."""
    count = 0
    for word in text.split():
        core = word.strip(".,;:!?()[]{}\"'“”‘’")
        if any(ch.isdigit() for ch in core) or any(ch in core for ch in "_/.@#$") or core[1:] != core[1:].lower():
            count += 1
    return count + len(_PROTECTED.findall(text))


def _score(units: list[_Unit], zipf: Callable[[str], float]) -> None:
    for unit in units:
        words = {w.lower() for w in _WORD.findall(unit.text)}
        unit.content = frozenset(w for w in words if zipf(w) < _FUNCTION_ZIPF and len(w) > 2)
    spread = Counter(word for unit in units for word in unit.content)
    for unit in units:
        # Information of a word: -log10 p = 9 - zipf (Zipf is log10 of the frequency per billion words), capped.
        carried = sum(min(9.0 - zipf(w), 7.0) * math.log1p(spread[w]) for w in unit.content)
        unit.score = carried / math.sqrt(max(unit.tokens, 1))
        if unit.text.lstrip().startswith("#"):
            unit.score = unit.score * 1.5 + 1.0
        if unit.first_in_paragraph:
            unit.score *= 1.25 if unit.paragraph == 0 else 1.1
        unit.score *= 1.0 + 0.1 * min(_protected_words(unit.text), 3)


def _select(units: list[_Unit], target: float) -> list[_Unit]:
    chosen: list[_Unit] = []
    total = 0
    for unit in sorted(units, key=lambda u: -u.score):
        overshoot = total + unit.tokens - target
        if overshoot > 0 and chosen and overshoot >= target - total:
            continue  # taking it would land further from the target than leaving it out
        if any(_similar(unit.content, other.content) for other in chosen):
            continue
        chosen.append(unit)
        total += unit.tokens
    order = {id(unit): index for index, unit in enumerate(units)}
    return sorted(chosen, key=lambda u: order[id(u)])


def _similar(a: frozenset[str], b: frozenset[str]) -> bool:
    return bool(a) and bool(b) and len(a & b) / len(a | b) > 0.6


def _prune(units: list[_Unit], remove: int, cap: float, zipf: Callable[[str], float]) -> None:
    """Remove about ``remove`` tokens of the most predictable words, at most ``cap`` of each unit's words."""
    candidates: list[tuple[float, int, int, int, int]] = []  # (-zipf, unit, start, end, word index)
    for index, unit in enumerate(units):
        if unit.code or unit.text.lstrip().startswith(("#", "|")):
            continue  # code, headings and table rows keep every word
        shielded = [(m.start(), m.end()) for m in _PROTECTED.finditer(unit.text)]
        for number, match in enumerate(re.finditer(r"\S+", unit.text)):
            word = match.group()
            if number == 0 or not _PRUNABLE.fullmatch(word) or word in _KEEP:
                continue
            if any(a < match.end() and match.start() < b for a, b in shielded):
                continue
            frequency = zipf(word)
            if frequency >= _PRUNE_ZIPF:
                candidates.append((-frequency, index, match.start(), match.end(), number))
    candidates.sort()
    limits = [int(cap * len(unit.text.split())) for unit in units]
    cuts: dict[int, list[tuple[int, int]]] = {}
    removed = 0
    for _, index, start, end, _number in candidates:
        if removed >= remove:
            break
        if limits[index] <= 0:
            continue
        limits[index] -= 1
        cuts.setdefault(index, []).append((start, end))
        removed += 1  # every prunable word is one o200k token with its leading space
    for index, spans in cuts.items():
        text = units[index].text
        for start, end in sorted(spans, reverse=True):
            # Take the word and the whitespace before it, so no double space is left behind.
            left = start
            while left > 0 and text[left - 1] == " ":
                left -= 1
            text = text[:left] + text[end:]
        units[index].text = text


def _assemble(units: list[_Unit]) -> str:
    pieces: list[str] = []
    previous: _Unit | None = None
    for unit in units:
        if previous is not None:
            if unit.paragraph != previous.paragraph:
                pieces.append("\n\n")
            else:
                pieces.append("\n" if unit.line or previous.line else " ")
        pieces.append(unit.text)
        previous = unit
    return "".join(pieces)


def compress(text: str, rate_percent: int, count: Callable[[str], int]) -> Compressed:
    """Compress ``text`` towards ``rate_percent`` of its tokens (counted with ``count``).

    The output may stay above the target when the text has little left to remove (one long sentence, mostly
    code); it never goes below one unit.
    """
    zipf = _zipf()
    input_tokens = count(text)
    units = _units(text)
    if not units:
        return Compressed(text, input_tokens, input_tokens)
    for unit in units:
        unit.tokens = count(unit.text)
    _score(units, zipf)
    target = input_tokens * rate_percent / 100
    # Pruning removes predictable words (about a tenth of the selection), selection does the rest: pruning more
    # keeps more sentences but makes them telegraphic, which costs more meaning than it saves (measured).
    prune_share = min(0.1, 1 - rate_percent / 100)
    chosen = _select(units, target / (1 - prune_share))
    selected = sum(unit.tokens for unit in chosen)
    if selected > target:
        cap = min(0.25, 1 - rate_percent / 100)
        _prune(chosen, math.ceil(selected - target), cap, zipf)
    output = _assemble(chosen)
    if count(output) >= input_tokens:
        return Compressed(text, input_tokens, input_tokens)
    return Compressed(output, input_tokens, count(output))
