"""Chinese people's names in a question, found without a model: a common surname and one or two
characters after it, unless the surname character is part of a common word ("周末", "每周",
"高兴": jieba's dictionary).

Chinese has no capitals, so ``query_text.dense_text`` cannot see a name as it does in English;
yet a name weighs on a short question's vector as it does there: USE put "陈静每周要上两个夜班。"
above "陈静的老公周浩是做软件开发的。" for "陈静的另一半叫什么？". Masked with "他", the gateway's
top 5 held the right short fact for 95.6 % of Chinese questions on the dev people instead of
88.9 % (bench/multilingual_eval.py; docs/BENCHMARKS-HISTORY.md, "Chinese names masked").

The given name is two characters unless the third one is a frequent word on its own ("的",
"是", "住") or starts a word with the fourth ("陈静每天": "每天"). A two-character given name
that runs into a rarer character ("何森靠什么谋生") is masked with it: the cost is one word.
"""

from __future__ import annotations

import functools
import logging
import re
import threading

import jieba

#: the ~100 most common Chinese surnames (single characters; together they cover ~85 % of people)
SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程"
    "苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝"
    "龚邵万钱严覃武戴莫孔向汤"
)
MASK = "他"
#: a dictionary word this frequent is a common word, not a name ("周末" 654; "梁家" 37)
COMMON_WORD = 100
#: ... and one this frequent, after a name or before a surname character, is a word of its own
#: ("存钱" 35, "课余" 62: "陈静存钱是…" is 陈静 and 存钱, not 陈静存 and 钱是)
WORD = 10
#: a character this frequent on its own ends a name before it ("的", "是", "住"; "豪" 1,182)
COMMON_CHAR = 10_000
_HAN = "\u4e00-\u9fff"
_CANDIDATE = re.compile(f"[{SURNAMES}](?=[{_HAN}])")
_IS_HAN = re.compile(f"[{_HAN}]")
_LOCK = threading.Lock()


@functools.cache
def _frequency() -> dict[str, int]:
    """jieba's dictionary: word -> frequency (loaded once, ~0.7 s; the same default tokenizer
    as ``stores.text_analysis``, so one copy in memory)."""
    with _LOCK:
        jieba.setLogLevel(logging.WARNING)
        jieba.dt.initialize()
        return jieba.dt.FREQ  # type: ignore[no-any-return]


def spans(query: str) -> list[tuple[int, int]]:
    """(start, end) of each Chinese name in ``query``."""
    if not _CANDIDATE.search(query):
        return []
    freq = _frequency()
    out: list[tuple[int, int]] = []
    pos = 0
    for m in _CANDIDATE.finditer(query):
        i = m.start()
        if (out and i <= pos) or _in_word(query, i, freq):  # inside or right after a name
            continue
        end = i + 2
        third = query[end : end + 1]
        if (
            third
            and _IS_HAN.match(third)
            and freq.get(third, 0) < COMMON_CHAR
            and freq.get(query[end : end + 2], 0) < WORD
        ):
            end += 1
        out.append((i, end))
        pos = end
    return out


def _in_word(query: str, i: int, freq: dict[str, int]) -> bool:
    """The surname character at ``i`` is part of a word: a common one with the next character
    ("周末"), or any with the one before ("每周", "存钱")."""
    return freq.get(query[i : i + 2], 0) >= COMMON_WORD or (
        i > 0 and freq.get(query[i - 1 : i + 1], 0) >= WORD
    )


def masked(query: str) -> str:
    """``query`` with each Chinese name replaced by "他"."""
    found = spans(query)
    if not found:
        return query
    parts, last = [], 0
    for start, end in found:
        parts += [query[last:start], MASK]
        last = end
    return "".join([*parts, query[last:]])
