"""Policy text reads as it is stored: no invisible characters, no mixed-script words.

An approver judges a policy change by reading it (the console shows a line diff). Text that
renders differently from what the engine evaluates defeats that: a zero-width space inside a
string literal, a right-to-left override that reorders what follows, a non-breaking space, or
a Cyrillic a (U+0430) among Latin letters (``'w\u0430llet'`` is not ``'wallet'``). New policy-language
text is therefore checked by :func:`check_policy_text` where it is accepted (the policy
activities, MFA policy conditions, session-profile scopes) and refused with a 400 naming the
position and the code point. Text already stored is never re-judged: evaluation does not call
this module.

What is refused (Unicode properties from the ``regex`` module, script extensions from
``fontTools.unicodedata``; both track current Unicode versions):

- *invisible*: default-ignorable code points (zero-width characters, bidi controls,
  variation selectors, Hangul fillers, tags…), other format (Cf), control (Cc), private-use,
  surrogate and unassigned code points; tab, line feed and carriage return are allowed, and
  an emoji presentation selector right after an emoji;
- *whitespace other than the ASCII space* (no-break and other-width spaces, line and
  paragraph separators);
- *mixed scripts in one word*: a word (a run of letters, marks, digits and ``_``) whose
  characters share no script, following the resolved script sets of Unicode TS #39 (Han with
  Hiragana/Katakana, Hangul or Bopomofo, as Japanese, Korean and Chinese write, count as
  one). Different words may use different scripts; a note in one script, Latin or not, is
  accepted.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator

import regex
from fontTools.unicodedata import script, script_extension, script_name

from infra.errors import InvalidRequest

#: Characters that render as nothing, or as something other than what they are.
_INVISIBLE = regex.compile(
    r"[[\p{Default_Ignorable_Code_Point}\p{Cc}\p{Cf}\p{Co}\p{Cs}\p{Cn}]--[\t\n\r\uFE0E\uFE0F]]"
    # Text/emoji presentation selectors only right after an emoji (a note's "⚠️").
    r"|(?<!\p{Emoji})[\uFE0E\uFE0F]", regex.V1
)
#: Whitespace that is not the ASCII space (or tab, line feed, carriage return).
_ODD_SPACE = regex.compile(r"[[\p{White_Space}\p{Z}]--[ \t\n\r]]", regex.V1)
#: Words: runs of letters, marks, digits and connector punctuation.
_WORD = regex.compile(r"[\p{L}\p{M}\p{N}\p{Pc}]+")
#: Scripts that apply to every script (TS #39: they do not constrain a word).
_ANY_SCRIPT = frozenset({"Zyyy", "Zinh"})
#: TS #39 augmented script sets: writing systems that mix scripts within a word.
_AUGMENTED = {
    "Hani": frozenset({"Hani", "Hanb", "Jpan", "Kore"}),
    "Hira": frozenset({"Hira", "Jpan"}),
    "Kana": frozenset({"Kana", "Jpan"}),
    "Hang": frozenset({"Hang", "Kore"}),
    "Bopo": frozenset({"Bopo", "Hanb"}),
}


class UnreadablePolicyText(InvalidRequest):
    """Policy text holds a character a reviewer would not see, or a mixed-script word (400).

    Like ``InvalidPolicyExpression`` it carries ``line`` and ``column`` (1-based), and also
    ``index`` (0-based, in code points).
    """

    code = "unreadable_policy_text"

    def __init__(self, problem: str, *, field: str, text: str, index: int) -> None:
        line = text.count("\n", 0, index) + 1
        column = index - (text.rfind("\n", 0, index) + 1) + 1
        name = field.rsplit(".", 1)[-1]
        super().__init__(f"invalid policy {name}: {problem} at index {index} (line {line}, "
                         f"column {column}); policy text must show everything it holds",
                         field=field)
        self.line = line
        self.column = column
        self.index = index


def code_point(char: str) -> str:
    """``U+200B (ZERO WIDTH SPACE)``: how an error names a character."""
    name = unicodedata.name(char, "") or f"unnamed, category {unicodedata.category(char)}"
    return f"U+{ord(char):04X} ({name})"


def _scripts(char: str) -> frozenset[str] | None:
    """The augmented script set of ``char``; ``None`` when it fits any script."""
    scripts = set(script_extension(char))
    if scripts & _ANY_SCRIPT:
        return None
    augmented: set[str] = set()
    for code in scripts:
        augmented |= _AUGMENTED.get(code, {code})
    return frozenset(augmented)


def _mixed_words(text: str) -> Iterator[tuple[int, str, tuple[str, str]]]:
    """For each word without a common script: the index of the first character that leaves
    it without one, the word, and the scripts of its first letter and of that character."""
    for word in _WORD.finditer(text):
        common: frozenset[str] | None = None
        first = ""
        for offset, char in enumerate(word.group()):
            scripts = _scripts(char)
            if scripts is None:
                continue
            first = first or char
            common = scripts if common is None else common & scripts
            if not common:
                yield (word.start() + offset, word.group(),
                       (script_name(script(first)), script_name(script(char))))
                break


def check_policy_text(text: str | None, *, field: str) -> None:
    """Refuse ``text`` if a reviewer could not read it as the engine does.

    Args:
        text: a policy field as submitted (``None`` or empty: nothing to check).
        field: the request field it came from (``parameters.condition``…), named in the 400.

    Raises:
        UnreadablePolicyText: an invisible or odd-space character, or a mixed-script word;
            the message names the index, line and column, and the code point.
    """
    if not text:
        return
    found = _INVISIBLE.search(text)
    if found:
        raise UnreadablePolicyText(f"invisible character {code_point(found.group())}",
                                   field=field, text=text, index=found.start())
    found = _ODD_SPACE.search(text)
    if found:
        raise UnreadablePolicyText(
            f"whitespace other than the ASCII space {code_point(found.group())}",
            field=field, text=text, index=found.start())
    for index, word, scripts in _mixed_words(text):
        raise UnreadablePolicyText(
            f"the word {word!r} mixes scripts ({', '.join(scripts)}): {code_point(text[index])}",
            field=field, text=text, index=index)


def check_policy_fields(prefix: str, **fields: str | None) -> None:
    """:func:`check_policy_text` for each of ``fields`` (wire names), under ``prefix``."""
    for name, text in fields.items():
        check_policy_text(text, field=f"{prefix}{name}")
