"""Tokenizers that need no download: byte-level BPE with no merges, one token per UTF-8 byte.

Offline presets use them so every prompt is representable without a vocabulary file. They are
ordinary `PreTrainedTokenizerFast` objects, so pipelines call them exactly as they call CLIP's
or T5's tokenizer, and `save_pretrained` writes them like any other.
"""

from __future__ import annotations

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
from transformers import PreTrainedTokenizerFast

# </s> is not id 2: CLIP reads id 2 as "legacy config" and would pool the wrong token.
SPECIALS = ["<pad>", "<s>", "<unk>", "</s>"]


def byte_tokenizer(max_length: int, *, bos: bool) -> PreTrainedTokenizerFast:
    """CLIP-style (`bos=True`: <s> prompt </s>) or T5-style (`bos=False`: prompt </s>)."""
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {token: i for i, token in enumerate([*SPECIALS, *sorted(alphabet)])}
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    single = "<s> $A </s>" if bos else "$A </s>"
    tokenizer.post_processor = processors.TemplateProcessing(
        single=single, special_tokens=[("<s>", vocab["<s>"]), ("</s>", vocab["</s>"])]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        model_max_length=max_length,
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
    )
