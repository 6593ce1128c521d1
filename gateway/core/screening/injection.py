"""Prompt-injection detection: the normalisation that undoes obfuscation (compatibility forms,
invisible characters, look-alike letters, spacing) and the English + Chinese attack patterns."""

from __future__ import annotations

import re
import unicodedata

from gateway.core.screening import injection_phrasings as phrasings
from gateway.core.screening.injection_agents import AGENT_PHRASINGS
from gateway.core.screening.injection_phrasings import ZH_FILLER as _ZH_FILLER
from gateway.core.screening.injection_phrasings import ZH_PRIOR as _ZH_PRIOR
from gateway.core.screening.injection_phrasings import ZH_RULES as _ZH_RULES

# Invisible/format characters (zero-width space/joiners, word joiner, BOM, soft hyphen, bidi
# controls, tag characters) and combining marks (accents stacked on Latin letters).
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e007f"
    "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+"
)

# Cyrillic, Greek and other letters that render like Latin ones (NFKC leaves them alone).
_HOMOGLYPHS = {
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p",
    "с": "c", "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "һ": "h",
    "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l", "ո": "n", "ս": "u", "ց": "g", "ɡ": "g", "ı": "i",
    "ɩ": "i", "ʟ": "l", "ɴ": "n", "ʀ": "r", "ᴅ": "d", "ᴇ": "e", "ᴏ": "o", "ᴛ": "t", "ᴜ": "u",
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
    "τ": "t", "υ": "u", "χ": "x", "γ": "y", "ω": "w", "ϲ": "c", "ϳ": "j",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C",
    "Т": "T", "Х": "X", "І": "I", "Ј": "J", "Ѕ": "S", "Ү": "Y", "Ԁ": "D", "Ԛ": "Q", "Ԝ": "W",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "Ϲ": "C",
    # small capitals (no compatibility decomposition): "ɪɢɴᴏʀᴇ" (issue 33 M5)
    "ᴀ": "a", "ʙ": "b", "ᴄ": "c", "ꜰ": "f", "ɢ": "g", "ʜ": "h", "ɪ": "i", "ᴊ": "j", "ᴋ": "k",
    "ᴍ": "m", "ᴘ": "p", "ǫ": "q", "ꜱ": "s", "ᴠ": "v", "ᴡ": "w", "ʏ": "y", "ᴢ": "z",
}  # fmt: skip
_FOLD = str.maketrans(_HOMOGLYPHS)
_HOMOGLYPH = re.compile("[" + "".join(_HOMOGLYPHS) + "]")
# Horizontal white space: runs of two or more, or any single one that is not a plain space.
_H = "\t\r\f\v\x1c-\x1f\x85\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_SPACES = re.compile(f"[ {_H}]{{2,}}|[{_H}]")
_ODD_SPACE = re.compile(f"[{_H}]")
_NEWLINES = re.compile(r" ?\n\s*")
# a space or a line break between two CJK characters (kana too): "忽 略 指 令", "忽略\n之前的指令"
_CJK_GAP = re.compile(r"([\u3040-\u30ff\u3400-\u9fff])[ \n](?=[\u3040-\u30ff\u3400-\u9fff])")
# "i g n o r e", "i.g.n.o.r.e", "i-g-n-o-r-e": four or more single letters with one separator.
_SPACED_OUT = re.compile(r"(?<![A-Za-z])[A-Za-z](?:[ .\-_*·|/][A-Za-z](?![A-Za-z])){3,}")
_SEPARATORS = re.compile(r"[ .\-_*·|/]")
_SPACED_HINT = re.compile(r"[ .\-_*·|/][a-z][ .\-_*·|/][a-z][ .\-_*·|/]")


# Unicode tag characters U+E0020–U+E007E spell ASCII invisibly, and a model reads them: a run of
# them is screened as the ASCII it spells, set apart by spaces
_TAG_RUN = re.compile("[\U000e0020-\U000e007e]+")


def _untag(m: re.Match[str]) -> str:
    return " " + "".join(chr(ord(c) - 0xE0000) for c in m.group(0)) + " "


def _fold(text: str) -> str:
    """Everything ``normalise`` does except case folding."""
    if not text.isascii():
        if max(text) >= "\U000e0000":
            text = _TAG_RUN.sub(_untag, text)
        # NFKD = NFKC's compatibility folding, decomposed so that combining marks can be dropped
        text = _INVISIBLE.sub("", unicodedata.normalize("NFKD", text))
        # recompose what NFKD split and no mark removal touched (kana voicing: で, プ)
        text = unicodedata.normalize("NFC", text)
        if _HOMOGLYPH.search(text):
            text = text.translate(_FOLD)
        # traditional Chinese folded to simplified, always (Japanese shares the characters: the
        # patterns are folded the same way, ``_folded``)
        text = phrasings.fold_traditional(text)
    if "  " in text or _ODD_SPACE.search(text):
        text = _SPACES.sub(" ", text)
    if "\n" in text:
        text = _NEWLINES.sub("\n", text)
    if not text.isascii():
        text = _CJK_GAP.sub(r"\1", text)  # "忽 略 指 令" -> "忽略指令"; a split line joined
    return text


def normalise(text: str) -> str:
    """The text as the model would read it, in a form the patterns can match: compatibility
    folding (NFKC: full-width, mathematical and circled letters, ligatures), format characters
    (zero-width, soft hyphen, BOM, bidi) and combining marks removed, look-alike Cyrillic/Greek
    letters folded to ASCII, runs of spaces/tabs collapsed to one space (line breaks kept as one
    newline) and dropped between two CJK characters, case folded."""
    return _fold(text).casefold()


def _respace(text: str) -> str:
    """Join letters that were spaced out one by one ("i g n o r e" → "ignore")."""
    return _SPACED_OUT.sub(lambda m: _SEPARATORS.sub("", m.group(0)), text)


_Q = r"(?:all|any|every|each|the|these|those|of|your|its|their|such)"
_PRIOR = (
    r"(?:previous|prior|preceding|above|earlier|former|foregoing|initial|original|system"
    r"|developer|safety|security|hidden)"
)
_RULES = (
    r"(?:instructions?|rules|prompts?|directives?|directions|guidelines|guardrails|constraints"
    r"|restrictions|policies|commands|orders|context|programming|limitations|filters)"
)
_GUARDS = (
    r"(?:instructions|prompt|rules|restrictions|guardrails|guidelines|filters|policies|protocols"
    r"|safeguards|limitations)"
)


# Patterns run on normalise()d text (lower case); a space in a pattern matches a space or a line
# break. Each pattern comes with trigger substrings, one of which must be in the text for it to
# run; tests/unit/test_screening_injection.py has attacks for every family and benign sentences
# that share their words.
_ATTACKS: tuple[tuple[tuple[str, ...], str], ...] = (
    # ignore / disregard / forget … previous instructions
    (
        ("ignor", "disregard", "forget", "follow", "obey"),
        r"\b(?:ignore|disregard|forget|do not follow|don't follow|do not obey|don't obey|stop following"
        rf"|stop obeying)(?: {_Q}){{0,3}} {_PRIOR} (?:\w+ )?{_RULES}\b",
    ),
    (
        ("ignor", "disregard", "forget", "overrid", "bypass", "follow", "obey"),
        r"\b(?:ignore|disregard|forget|override|bypass|stop following|stop obeying|do not follow"
        rf"|don't follow|do not obey|don't obey) (?:all )?(?:of )?your {_RULES}\b",
    ),
    (
        ("ignor", "disregard", "forget"),
        r"\b(?:ignore|disregard|forget) (?:all|any) (?:of )?(?:your |the )?(?:instructions|prompts"
        r"|directives|guidelines|guardrails|restrictions|rules)\b",
    ),
    (
        ("ignor", "disregard", "forget"),
        r"\b(?:ignore|disregard|forget) (?:all of |everything )(?:the )?(?:above|previous|prior|before"
        r"|you (?:were|have been|'ve been) (?:told|given|instructed))",
    ),
    (
        ("overrid", "overwrit", "bypass", "circumvent", "disable", "turn off"),
        r"\b(?:override|overwrite|bypass|circumvent|disable|turn off) (?:the |your |all |any )?"
        rf"(?:system|safety|security|content|ethical) {_GUARDS}\b",
    ),
    # reveal the system prompt
    (
        ("prompt", "instructions", "message"),
        r"\b(?:reveal|print|show|repeat|output|display|leak|dump|tell me|give me|recite|spell out)"
        r" (?:me )?(?:your (?:(?:full|entire|exact|original|initial|hidden|secret|complete) )*"
        r"(?:system|initial|original|hidden|developer|secret)|the (?:(?:full|entire|exact|original"
        r"|initial|hidden|secret|complete) )*(?:system|hidden|developer|secret)) (?:prompt"
        r"|instructions|message)",
    ),
    # a fake "system prompt:" header or a role line
    (
        ("system",),
        r"\b(?:new |updated |real |actual |true |secret |hidden )?system (?:prompt|instructions?)"
        r" ?(?::|=|override|update)",
    ),
    (
        ("original", "initial"),
        r"\b(?:reveal|print|show|repeat|output|display|leak|dump|tell me|give me|recite|spell out)"
        r" (?:me )?the (?:(?:full|entire|exact|complete) )*(?:original|initial) (?:prompt"
        r"|instructions|message) you (?:were|have been|'ve been) given\b",
    ),
    # a "system:" line that addresses the model (not "System: Ubuntu 22.04")
    (
        ("system",),
        r"(?:^|\n)(?:#+ ?|\*\*|\[)?system ?(?:\*\*|\])? ?:[^\n]{0,80}?\b(?:you|your|ignore"
        r"|must|always|never|do not|don't|obey|follow|new|reply|answer|respond)\b",
    ),
    # chat-template tokens: ChatML, Llama [INST]/<<SYS>>, Gemma, Alpaca, role tags
    (
        ("<|",),
        r"<\|(?:im_start|im_end|im_sep|endoftext|system|user|assistant|eot_id|begin_of_text"
        r"|start_header_id|end_header_id|end|start)\|>",
    ),
    (
        ("inst]", "sys>", "_of_turn>", "system", "##"),
        r"\[/?inst\]|<</?sys>>|<start_of_turn>|<end_of_turn>|</?(?:system|sys|system_prompt)>"
        r"|\[/?system\]|###? ?(?:instruction|system)(?: prompt)? ?:",
    ),
    # DAN and other jailbreak personas ("DAN" itself is matched case-sensitively in find())
    (
        ("do anything now",),
        r"\bdan\b[^.\n]{0,40}\bdo anything now\b|(?:stands for|short for|called|named|known as|mode)"
        r"[ :\"“(]*do anything now\b|[(\"“]do anything now\b",
    ),
    (
        (" mode",),
        r"\b(?:enable|activate|enter|switch to|turn on) (?:the )?(?:dan|god|jailbreak|jailbroken"
        r"|unrestricted|unfiltered|evil) mode\b|\bjailbr(?:oken|eak) mode\b"
        r"|\byou(?: are|'re) (?:now )?in (?:developer|dev|god|dan|jailbreak) mode\b"
        r"|\bwith developer mode enabled\b",
    ),
    (
        ("bound by", "restricted by", "limited by", "have no", "had no"),
        r"\byou are (?:now )?(?:no longer|not) (?:bound|restricted|limited) by\b"
        r"|\b(?:pretend|act|behave) (?:as if|like|that) you (?:have|had) no (?:restrictions|rules"
        r"|limits|filters|guidelines)\b",
    ),
    (
        ("unrestricted", "unfiltered", "uncensored", "jailbroken"),
        r"\b(?:you are|you're|act as|acting as|pretend to be|roleplay as|you will be) (?:now )?"
        r"(?:an? |the )?(?:unrestricted|unfiltered|uncensored|jailbroken) (?:ai|assistant|model|chatbot)\b",
    ),
    # tool-call bait: call markup, a JSON call object, "call the tool X with …"
    (
        ("tool", "function", "invoke"),
        r"</?(?:tool_call|tool_calls|tool_use|function_call|function_calls|tool_code|tool_result"
        r"|invoke)\b|<function=",
    ),
    (
        ("tool", "function", '"recipient_name'),
        r"\{ ?\"(?:tool|tool_name|tool_calls|tool_use|function|function_call|recipient_name)\" ?:",
    ),
    (
        ('"name"',),
        r"\{ ?\"name\" ?: ?\"[^\"\n]{1,64}\" ?, ?\"(?:arguments|parameters|args|input)\" ?:",
    ),
    (
        ("tool",),
        r"\b(?:call|invoke|execute|trigger) (?:the |this |that )?tool (?:named |called )?"
        r"[`'\"]?[a-z][\w.\-]*[`'\"]? (?:with|using|passing)\b",
    ),
    (
        ("tool",),
        r"\b(?:call|invoke|execute|trigger) (?:the )?[`'\"]?[a-z]\w*_\w+[`'\"]? tool (?:with|using|to)\b",
    ),
    (("call", "function"), r"(?:^|\n)(?:tool|function) ?call ?:|\bto=functions\.\w+"),
    # 中文: 忽略/无视/忘记 … 之前的指令
    (
        ("忽略", "无视", "忘", "理会", "不要管", "别管", "抛开", "遵守", "违背"),
        r"(?:忽略|无视|忘记|忘掉|忘了|不要理会|别理会|不用理会|不要管|别管|抛开|不再遵守|不要遵守|停止遵守|违背)"
        rf"{_ZH_FILLER}{_ZH_PRIOR}{_ZH_FILLER}{_ZH_RULES}",
    ),
    (
        ("无视", "绕过", "突破"),
        r"(?:无视|绕过|突破)(?:掉)?(?:你的|所有|一切|全部)?(?:的)?(?:系统|安全|内容|道德)?(?:的)?"
        r"(?:限制|规则|指令|审查|过滤|约束)",
    ),
    (
        ("解除", "取消", "关闭", "关掉"),
        r"(?:解除|取消|关闭|关掉)(?:掉)?(?:你的|所有)?(?:的)?(?:系统|安全|内容|道德)(?:的)?(?:限制|规则|审查|过滤|约束)",
    ),
    (("回答都",), r"以后(?:所有|每次)?(?:的)?回答都(?:忽略|无视|不要遵守)"),
    (("从现在",), r"从现在(?:开始|起)[,，]?[^\n。]{0,6}?(?:忽略|无视|忘记|忘掉|不再遵守|不要遵守)"),
    (
        ("系统", "初始", "system"),
        r"(?:告诉我|输出|显示|打印|泄露|重复|给我看|说出)(?:一下)?(?:你的)?(?:完整的|全部的|原始的)?"
        r"(?:系统提示词?|系统指令|系统设定|初始指令|初始提示|system prompt)",
    ),
    (("系统",), r"(?:新的|真正的|更新的)?系统(?:提示词?|指令)\s*[:：]"),
    (
        ("模式",),
        r"(?:进入|开启|启用|切换到|激活)(?:了)?(?:越狱|上帝|无限制|dan)模式|越狱模式"
        r"|你(?:现在)?(?:处于|进入了?)开发者模式",
    ),
    (("你现在是",), r"你现在是(?:一个)?(?:不受(?:任何)?限制|没有(?:任何)?限制|无限制|dan|越狱)"),
    (("调用",), r"调用(?:一下)?(?:这个|那个)?工具\s*[`'\"]?[a-z_][\w.]*"),
    *phrasings.PHRASINGS,
    *AGENT_PHRASINGS,
)


def _folded(text: str) -> str:
    """A pattern or trigger folded as ``_fold`` folds the text (traditional -> simplified)."""
    return phrasings.fold_traditional(text)


def _spaces_match_newlines(pattern: str) -> str:
    """Turn each literal space outside a character class into ``[ \n]``."""
    out, in_class, escaped = [], False, False
    for ch in pattern:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "[":
            in_class = True
        elif ch == "]":
            in_class = False
        elif ch == " " and not in_class:
            ch = "[ \n]"
        out.append(ch)
    return "".join(out)


# (triggers, pattern): a pattern runs only when the normalised text holds one of its triggers.
_FAMILIES = tuple(
    (tuple(_folded(t) for t in triggers), re.compile(_spaces_match_newlines(_folded(p)), re.M))
    for triggers, p in _ATTACKS
)
_ASCII_TRIGGERS = tuple(sorted({t for ts, _ in _FAMILIES for t in ts if t.isascii()}))
_OTHER_TRIGGERS = tuple(sorted({t for ts, _ in _FAMILIES for t in ts if not t.isascii()}))
# "Dan" is a first name: only the upper-case persona counts, checked before case folding.
_DAN = re.compile(
    r"\b(?:(?i:you are|you're|act as|as|be|become|called|named|i am|stay|play|roleplay as)"
    r" (?:now )?(?:a |the )?DAN\b|DAN(?: mode| prompt| jailbreak| ?:)|Do Anything Now\b)"
)


def find(text: str) -> str:
    """The first attack phrase found in the normalised text ("" when there is none); then in
    the text's forms an attacker hides it in (issue 33 M5): a forged chat transcript, base64,
    words spelled out letter by letter, digits for letters."""
    folded = _fold(text)
    if "DAN" in folded or "Do Anything" in folded:
        m = _DAN.search(folded)
        if m:
            return m.group(0).casefold()
    norm = folded.casefold()
    found = _search(norm)
    if not found and _SPACED_HINT.search(norm):
        found = _search(_respace(norm))
    return found or phrasings.hidden(text, norm, find, _search, normalise)


def _triggers_in(norm: str) -> set[str]:
    """The triggers that occur in ``norm``. ASCII triggers are looked up in the ASCII characters
    only (a narrower string searches faster; joining across removed characters can only add
    hits, and a pattern still has to match the real text)."""
    if norm.isascii():
        return {t for t in _ASCII_TRIGGERS if t in norm}
    narrow = norm.encode("ascii", "ignore").decode("ascii")
    found = {t for t in _ASCII_TRIGGERS if t in narrow}
    chars = set(norm)  # a trigger whose first character is absent cannot occur
    found.update(t for t in _OTHER_TRIGGERS if t[0] in chars and t in norm)
    return found


def _search(norm: str) -> str:
    present = _triggers_in(norm)
    if not present:
        return ""
    for triggers, pattern in _FAMILIES:
        if not present.isdisjoint(triggers):
            m = pattern.search(norm)
            if m:
                return m.group(0).strip()
    return ""
