"""The encoder's tokenizer rewrites the characters its vocabulary lacks and nothing else."""

from __future__ import annotations

import unicodedata

import pytest
from tokenizers import Tokenizer, models
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from mismatch_core.resources import encoder_path, load_tokenizer
from mismatch_core.unicode_symbols import UNICODE_VERSION, symbol_code_points
from mismatch_core.vocabulary_gaps import rewrite_vocabulary_gaps


def pieces(text: str) -> list[str]:
    return load_tokenizer().tokenize(text)


def test_a_symbol_glued_to_a_word_leaves_the_word_readable() -> None:
    assert pieces("was terrible😀 and") == ["was", "terrible", "and"]
    assert pieces("Thanks! 🙏🏽") == ["thanks", "!"]  # emoji and skin tone
    assert pieces("I ❤️ it") == ["i", "it"]  # heart and its variation selector
    assert "[UNK]" in AutoTokenizer.from_pretrained(encoder_path()).tokenize("terrible😀")


def test_a_keycap_leaves_its_digit() -> None:
    # U+20E3 is an enclosing mark (Me), not a symbol: "1️⃣" read as one unknown word
    assert pieces("1️⃣ first, then 3⃣") == ["1", "first", ",", "then", "3"]


@pytest.mark.skipif(
    unicodedata.unidata_version != UNICODE_VERSION,
    reason=f"the table is Unicode {UNICODE_VERSION}'s; this Python has another version",
)
def test_the_frozen_symbol_table_is_unicodes_symbols_and_enclosing_marks() -> None:
    expected = [
        code
        for code in range(0x110000)
        if unicodedata.category(chr(code))[0] == "S" or unicodedata.category(chr(code)) == "Me"
    ]
    assert symbol_code_points() == expected


def test_a_math_or_currency_sign_glued_to_a_number_leaves_the_number() -> None:
    assert pieces("price 5₿") == ["price", "5"]
    assert pieces("∀x") == ["x"]


def test_a_letterlike_symbol_or_number_form_reads_as_its_plain_text() -> None:
    assert pieces("It was 25℃ today.") == pieces("It was 25°C today.")
    assert pieces("98℉") == pieces("98°F")
    assert pieces("Chapter Ⅻ and ⅱ") == pieces("Chapter XII and ii")
    assert pieces("℅ the firm") == pieces("c/o the firm")


def test_other_compatibility_forms_stay_unknown() -> None:
    # each replacement text costs every text one more pass (module docstring)
    assert pieces("ＡＢＣ") == ["[UNK]"]


def test_text_the_vocabulary_holds_is_read_as_before() -> None:
    plain = AutoTokenizer.from_pretrained(encoder_path())
    for text in [
        "The café's 2nd floor… costs ½ of €30 (m²) — “quoted” © 2020, 5°C",
        "Привет, мир. Γεια σου. مرحبا",
        "Tabs\tand\nnewlines  and   spaces",
    ]:
        assert pieces(text) == plain.tokenize(text), text


def test_letters_of_a_script_the_vocabulary_lacks_stay_unknown() -> None:
    # dropping them would drop words; an unknown word still says a word is there
    assert pieces("你好 world") == ["[UNK]", "[UNK]", "world"]


def test_offsets_point_into_the_text_as_given() -> None:
    text = "It was 35℃ and terrible😀."
    encoding = load_tokenizer()(text, return_offsets_mapping=True, add_special_tokens=False)
    read = [text[start:end] for start, end in encoding["offset_mapping"]]
    assert read == ["It", "was", "35", "℃", "℃", "and", "terrible", "."]


def test_a_tokenizer_without_wordpieces_is_left_as_it_is() -> None:
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.BPE()))
    rewrite_vocabulary_gaps(tokenizer)
    assert tokenizer.backend_tokenizer.normalizer is None
