"""Fitting a prompt to the model that will read it, before the model runs.

A prompt longer than the tokenizer reads is refused: truncating would silently lose the user's
words. A model with a closed word-level vocabulary (mini-sd) drops the words it does not know and
says which; they would otherwise all read as the same <unk> token and steer the picture
arbitrarily.
"""

from __future__ import annotations

from dataclasses import replace

from tokenizers import models

from engine.errors import InvalidRequest
from engine.requests import Request
from engine.runner import Resolved

PROMPT_FIELDS = ("prompt", "negative_prompt")


def fit_prompts(pipe, preset_id: str, resolved: Resolved) -> Resolved:
    """The request as the model will read it, with a warning per dropped word; raises
    `InvalidRequest` when a prompt is too long or has no word the model knows."""
    request, warnings = resolved.request, []
    for name in ("tokenizer", "tokenizer_2"):
        tokenizer = getattr(pipe, name, None)
        if tokenizer is None:
            continue
        request, dropped = _known_words_only(tokenizer, preset_id, request)
        warnings += dropped
        _check_length(tokenizer, preset_id, request)
    if request is resolved.request:
        return resolved
    return replace(resolved, request=request, warnings=(*resolved.warnings, *warnings))


def _known_words_only(tokenizer, preset_id: str, request: Request) -> tuple[Request, list[str]]:
    vocab = closed_vocabulary(tokenizer)
    if vocab is None:
        return request, []
    changes, warnings = {}, []
    for name in PROMPT_FIELDS:
        text = getattr(request, name)
        if not text.strip():
            continue
        words = words_of(tokenizer, text)
        unknown = [w for w in words if w not in vocab]
        if not unknown:
            continue
        label = name.replace("_", " ")
        kept = [w for w in words if w in vocab]
        if not kept and name == "prompt":
            raise InvalidRequest(
                f"{preset_id} knows none of the words in the prompt; it knows: "
                + ", ".join(sorted(vocab))
            )
        changes[name] = " ".join(kept)
        warnings.append(f"{preset_id} does not know {quoted(unknown)}; left out of the {label}")
    return (replace(request, **changes) if changes else request), warnings


def closed_vocabulary(tokenizer) -> frozenset[str] | None:
    """The words a word-level tokenizer knows (special tokens aside); None for one that reads
    any text (sub-word or byte tokenizers)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None or not isinstance(backend.model, models.WordLevel):
        return None
    return frozenset(w for w in tokenizer.get_vocab() if not w.startswith("<"))


def words_of(tokenizer, text: str) -> list[str]:
    """The text as the tokenizer splits it into words (normalized: lower case, letters)."""
    backend = tokenizer.backend_tokenizer
    normal = backend.normalizer.normalize_str(text) if backend.normalizer else text
    return [w for w, _ in backend.pre_tokenizer.pre_tokenize_str(normal)]


def quoted(words: list[str]) -> str:
    return ", ".join(f"'{w}'" for w in dict.fromkeys(words))


def _check_length(tokenizer, preset_id: str, request: Request) -> None:
    limit = getattr(tokenizer, "model_max_length", None)
    if limit is None or limit > 100_000:  # no real limit recorded
        return
    for name in PROMPT_FIELDS:
        count = len(tokenizer(getattr(request, name)).input_ids)
        if count > limit:
            raise InvalidRequest(
                f"the {name.replace('_', ' ')} is too long for {preset_id}: "
                f"{count} tokens, it reads at most {limit}"
            )
