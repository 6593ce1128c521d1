"""Who someone of a person's can be — family, partners, friends, people at work or next door —
in English and Chinese, and what a speaker calls their own: a closed class read by
``recall/whose.py`` (a statement about someone of the person asked about) and
``same_person.py``."""

from __future__ import annotations

_RELATION_WORDS = """
brother brothers sister sisters sibling siblings husband wife partner spouse fiance fiancee
boyfriend girlfriend son sons daughter daughters child children kid kids baby mother mom mum
father dad parents parent grandmother grandma grandfather grandpa grandson granddaughter uncle
aunt cousin niece nephew friend friends colleague colleagues coworker boss manager roommate
flatmate housemate neighbour neighbor stepson stepdaughter
"""
RELATIONS = frozenset(_RELATION_WORDS.split())
RELATIONS_ZH = (
    "哥哥", "弟弟", "姐姐", "妹妹", "兄弟", "姐妹", "丈夫", "老公", "妻子", "老婆", "爱人",
    "男朋友", "女朋友", "未婚夫", "未婚妻", "儿子", "女儿", "孩子", "宝宝", "妈妈", "母亲",
    "爸爸", "父亲", "父母", "爷爷", "奶奶", "外公", "外婆", "姥姥", "孙子", "孙女", "叔叔",
    "阿姨", "舅舅", "姑姑", "表哥", "表姐", "表弟", "表妹", "堂哥", "堂姐", "堂弟", "堂妹",
    "朋友", "同事", "老板", "领导", "上司", "室友", "邻居",
)  # fmt: skip
#: how a user names someone of theirs in passing ("我妈", "my flatmate"): the relations of
#: ``RELATIONS_ZH`` and the short forms people say
RELATIONS_SAID_ZH = (*RELATIONS_ZH, "妈", "爸", "闺蜜", "媳妇", "对象", "同学", "发小", "舅", "姨")

#: what a speaker calls their own ("闺女生日是下周四" of "张丽的女儿")
CALLED_ZH = {
    "女儿": ("女儿", "闺女", "丫头"),
    "儿子": ("儿子", "儿", "小子"),
    "丈夫": ("丈夫", "老公", "爱人"),
    "老公": ("老公", "丈夫", "爱人"),
    "妻子": ("妻子", "老婆", "媳妇", "爱人"),
    "老婆": ("老婆", "妻子", "媳妇", "爱人"),
    "妈妈": ("妈妈", "妈", "母亲"),
    "爸爸": ("爸爸", "爸", "父亲"),
}
