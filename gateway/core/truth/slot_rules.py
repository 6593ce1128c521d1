"""The slot rules: one pattern per way of stating an attribute, in English and Chinese (``RULES``,
tried in order by ``slots.parse``), built from shared pieces — the subject, the adverbs that may
stand between it and the verb, a value and where it ends — and the vocabulary's word lists."""

from __future__ import annotations

import re

from gateway.core.truth import values
from gateway.core.truth import vocabulary as vocab

_EN_SUBJECT = r"(?P<s>the user|user|用户|I|he|she|(?-i:[A-Z][\w-]+(?:\s[A-Z][\w-]+)?))"
_EN_ADVERBS = (
    r"(?P<adv>(?:\s+(?:now|currently|still|also|recently|just|already|finally|officially|"
    r"actually|no longer|again|since|has|have|had|never|does not|doesn't|do not|don't|is not|isn't|"
    r"can't|cannot|has not|hasn't|since then))*)"
)
_ZH_SUBJECT = r"(?P<s>用户|我|他|她|[A-Za-z][A-Za-z-]*(?:\s[A-Z][A-Za-z-]*)?|(?!用户|我|他|她)[\u4e00-\u9fff]{1,3}?)"
_ZH_ADVERBS = (
    r"(?P<adv>(?:现在|目前|已经|还|也|刚|刚刚|最近|一直|终于|又|都|仍然|不再|从此|如今|"
    r"去年|今年|前年|上个月|这个月|上周|上个星期|昨天|前几天|年初|年底|月初|月底)*)"
)
#: a value: words up to a boundary (punctuation, a clause, a time phrase)
_EN_VALUE = r"(?P<v>(?:[^,.;:!?()（）]|\.(?=\w)){1,60}?)"
_EN_END = (
    r"(?=\s*(?:$|[,.;:!?()（）]|\s(?:now|since|last|next|this|these|for|because|as of|with|and|"
    r"but|from|starting|until|again|anymore|any more|there|instead|too|in \d{4}|in (?:january|"
    r"february|march|april|may|june|july|august|september|october|november|december))\b))"
)
_ZH_VALUE = r"(?P<v>[^，。,.;；！!？?、（）()了的]{1,12}?)"
_ZH_END = r"(?=$|[，。,.;；！!？?、（）()]|了|的|去|住|工作|上班|啦|呢|吧|啊)"

_NUM = r"(?P<n>\d+|no|zero|a|an|one|two|three|four|five|six|seven|eight|nine|ten)"
_ZH_NUM = r"(?P<n>\d+|[零一两二三四五六七八九十])"


def _en(pattern: str) -> re.Pattern[str]:
    return re.compile(
        pattern.replace("{S}", _EN_SUBJECT)
        .replace("{ADV}", _EN_ADVERBS)
        .replace("{V}", _EN_VALUE + _EN_END),
        re.I,
    )


def _zh(pattern: str) -> re.Pattern[str]:
    return re.compile(
        pattern.replace("{S}", _ZH_SUBJECT)
        .replace("{ADV}", _ZH_ADVERBS)
        .replace("{V}", _ZH_VALUE + _ZH_END)
    )


_POSSESSED_EN = "|".join(
    sorted((re.escape(k) for k in vocab.POSSESSED if k.isascii()), key=len, reverse=True)
)
_POSSESSED_ZH = "|".join(
    sorted((re.escape(k) for k in vocab.POSSESSED if not k.isascii()), key=len, reverse=True)
)
_VEHICLE_EN = "|".join(
    sorted((re.escape(k) for k in values.VEHICLES if k.isascii()), key=len, reverse=True)
)
_VEHICLE_ZH = "|".join(
    sorted((re.escape(k) for k in values.VEHICLES if not k.isascii()), key=len, reverse=True)
)
_ROLE_EN = "|".join(sorted((re.escape(k) for k in values.ROLES), key=len, reverse=True))
_COUNTED_EN = "|".join(sorted((k for k in vocab.COUNTABLE if k.isascii()), key=len, reverse=True))
_COUNTED_ZH = "|".join(
    sorted((k for k in vocab.COUNTABLE if not k.isascii()), key=len, reverse=True)
)

#: (attribute, pattern), tried in order; an attribute ending in ":" takes its object from the match (``o``)
RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "count:",
        _en(
            r"^{S}{ADV}\s+(?:has|have|has got|'s got|owns|is raising)\s+"
            + _NUM
            + r"\s+(?:(?:young|little|grown|adult|small)\s+)?(?P<o>"
            + _COUNTED_EN
            + r")\b"
        ),
    ),
    (
        "team",
        _en(
            r"^{S}{ADV}\s+(?:moved|switched|transferred|was moved|has moved|joined)\s+"
            r"(?:over\s+)?(?:to\s+)?the\s+(?P<v>[\w&-]+(?:\s[\w&-]+)?)\s+team\b"
        ),
    ),
    (
        "residence",
        _en(
            r"^{S}{ADV}\s+(?:lives?|is living|has been living|'s living|resides|"
            r"is based|'s based|is settled|settled|has settled)\s+(?:now\s+)?in\s+{V}"
        ),
    ),
    (
        "residence",
        _en(
            r"^{S}{ADV}\s+(?:moved|relocated|has moved|has relocated|'s moved|moved back|"
            r"made the move|has made the move|moved house)\s+"
            r"(?:(?:back|over|house)\s+)?(?:from\s+[^,.;]{1,40}?\s+)?to\s+{V}"
        ),
    ),
    ("residence", _en(r"^home for {S}\s+is\s+(?:now\s+)?(?:in\s+)?{V}")),
    ("role", _en(r"^{S}{ADV}\s+(?:works|work|is working|has been working)\s+as\s+(?:an?\s+)?{V}")),
    (
        "role",
        _en(
            r"^{S}{ADV}\s+(?:is|became|has become|retrained as|trained as|qualified as)\s+"
            r"(?:now\s+)?(?:an?\s+)?(?:(?:qualified|certified|full-time|part-time|senior|junior)\s+)?"
            r"(?P<v>" + _ROLE_EN + r")\b"
        ),
    ),
    (
        "employer",
        _en(
            r"^{S}{ADV}\s+(?:works|work|is working|has been working|started working|"
            r"works full[- ]time)\s+(?:at|for)\s+{V}"
        ),
    ),
    (
        "employer",
        _en(
            r"^{S}{ADV}\s+(?:joined|got a job at|took a job at|is employed (?:at|by)|"
            r"took a (?:position|role|post) (?:at|with)|accepted (?:a|an) (?:offer|job) (?:from|at)|"
            r"started (?:a new job )?at)\s+{V}"
        ),
    ),
    ("manager", _en(r"^{S}{ADV}\s+(?:reports|reported) to\s+{V}")),
    (
        "manager",
        _en(
            r"^(?P<v>(?-i:[A-Z][\w-]+)(?:\s(?-i:[A-Z][\w-]+))?)\s+(?:became|is now|has become)\s+"
            + _EN_SUBJECT
            + r"'s\s+(?:new\s+)?(?:boss|manager|supervisor|line manager)\b"
        ),
    ),
    ("school", _en(r"^{S}{ADV}\s+(?:studies|is studying|studied) at\s+{V}")),
    (
        "partner",
        _en(
            r"^{S}{ADV}\s+(?:is married to|married|got married to|is dating|is engaged to|got engaged to)"
            r"\s+{V}"
        ),
    ),
    (
        "vehicle",
        _en(r"^{S}{ADV}\s+(?:drives|is driving)\s+(?:an?|the|her|his|their|my)\s+(?:new\s+)?{V}"),
    ),
    (
        "vehicle",
        _en(
            r"^{S}{ADV}\s+(?:bought|got|leased|traded (?:in )?(?:her|his|their|my|the) [\w -]{1,30}? for)"
            r"\s+(?:an?|the)\s+(?:new\s+|used\s+|second-hand\s+|electric\s+)?"
            r"(?P<v>(?:" + _VEHICLE_EN + r")(?:\s+(?:model\s+)?[\w-]{1,12})?)" + _EN_END
        ),
    ),
    (
        "allergic:",
        _en(
            r"^{S}{ADV}\s+(?:is|are|'s|has been|was)?\s*(?:not\s+|no longer\s+)?"
            r"(?:severely\s+|very\s+|mildly\s+)?allergic to\s+(?P<o>[^,.;:!?()]{1,40}?)" + _EN_END
        ),
    ),
    (
        "diet",
        _en(
            r"^{S}{ADV}\s+(?:is|'s|has become|became|went|has gone|is now)\s+"
            r"(?:(?:a|an|fully|strictly|no longer|not)\s+)*"
            r"(?P<v>vegetarian|vegan|pescatarian|keto)\b"
        ),
    ),
    (
        "eats:",
        _en(
            r"^{S}{ADV}\s+(?:eat|eats|drink|drinks|avoid|avoids|touch|touches|"
            r"started eating|started drinking|stopped eating|stopped drinking|gave up|"
            r"has given up|cut out)\s+(?P<o>[^,.;:!?()（）]{1,40}?)" + _EN_END
        ),
    ),
    (
        "likes:",
        _en(
            r"^{S}{ADV}\s+(?:like|likes|love|loves|enjoy|enjoys|adore|adores|dislike|"
            r"dislikes|hate|hates|can't stand|is into|is a fan of|is fond of)\s+"
            r"(?P<o>[^,.;:!?()（）]{1,40}?)" + _EN_END
        ),
    ),
    (
        "speaks:",
        _en(r"^{S}{ADV}\s+(?:speaks?|is fluent in|is learning)\s+(?P<o>[A-Z][a-z]+)" + _EN_END),
    ),
    (
        "plays:",
        _en(r"^{S}{ADV}\s+(?:plays?|is playing)\s+(?:the\s+)?(?P<o>[a-z][a-z ]{1,20}?)" + _EN_END),
    ),
    (
        "favourite:",
        _en(
            r"^{S}'s\s+(?:new\s+|current\s+|all-time\s+)?favou?rite\s+"
            r"(?P<o>[a-z]+(?:\s[a-z]+)?)\s+(?:is|are)\s+(?:now\s+|still\s+)?{V}"
        ),
    ),
    (
        "possessed",
        _en(
            r"^{S}'s\s+(?:new\s+|current\s+)?(?P<o>"
            + _POSSESSED_EN
            + r")\s+(?:is|are|has changed to|changed to|is now|moved to|was moved to|has moved to|"
            r"got moved to|was changed to|is moving to)\s+(?:now\s+|still\s+)?"
            r"(?:on\s+|at\s+|in\s+)?{V}"
        ),
    ),
    (
        "name",
        _en(
            r"^{S}{ADV}\s+(?:goes by|prefers to be called|is called|wants to be called)\s+"
            r"{V}"
        ),
    ),
    ("age", _en(r"^{S}{ADV}\s+(?:is|turned|'s)\s+(?P<v>\d{1,3})(?:\s+years?\s+old)?\b")),
    (
        "age",
        _en(
            r"^{S}{ADV}\s+(?:had|celebrated)\s+(?:her|his|their|my)\s+(?P<v>\d{1,3})"
            r"(?:st|nd|rd|th)\s+birthday\b"
        ),
    ),
    (
        "phone",
        _en(
            r"^{S}{ADV}\s+(?:got|has|have)\s+a\s+new\s+(?:phone\s+|mobile\s+|cell\s+)?number"
            r"[:,]?\s*(?:(?:it's|it is|which is)\s+)?(?P<v>\+?\d[\d ().-]{3,20}\d)"
        ),
    ),
    (
        "email",
        _en(
            r"^(?:please\s+|you can\s+)?(?:reach|contact|email|e-mail|write to)\s+{S}\s+at\s+"
            r"(?P<v>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
        ),
    ),
    (
        "name",
        _en(
            r"^(?:please\s+)?(?:call|address)\s+(?P<s>the user|me|him|her|(?-i:[A-Z][\w-]+))\s+"
            r"(?P<v>(?-i:[A-Z][\w-]+))\b"
        ),
    ),
    # Chinese
    (
        "count:",
        _zh(
            r"^{S}(?:家里|家)?{ADV}(?:有|养了|养着|养|生了)"
            + _ZH_NUM
            + r"(?:个|只|条|辆|台|套|位)(?P<o>"
            + _COUNTED_ZH
            + r")"
        ),
    ),
    ("role", _zh(r"^{S}{ADV}在[^，。,]{1,12}?(?:做|当|担任)(?:一名|一个|一位)?{V}")),
    (
        "residence",
        _zh(
            r"^{S}{ADV}(?:住在|住|居住在|定居在|定居|生活在|搬到了|搬到|搬去了|搬去|"
            r"搬家到|迁到|搬回)了?{V}"
        ),
    ),
    ("employer", _zh(r"^{S}{ADV}(?:在|去)(?P<v>[^，。,.;；！!？?、]{1,12}?)(?:工作|上班|任职)")),
    (
        "employer",
        _zh(r"^{S}{ADV}(?:入职了|入职|加入了|加入|跳槽到了|跳槽到|跳槽去了|跳槽去)了?{V}"),
    ),
    (
        "role",
        _zh(
            r"^{S}{ADV}(?:转行)?(?:是|当了|当|成为了|成为|成了|做了|做)(?:一名|一个|一位)?"
            r"(?P<v>护士|医生|老师|教师|软件工程师|工程师|程序员|设计师|律师|会计师|会计|产品经理|"
            r"学生|记者|厨师|研究员|销售|药剂师|数据科学家)"
        ),
    ),
    ("manager", _zh(r"^{S}{ADV}(?:向|归)(?P<v>[^，。,]{1,8}?)汇报")),
    (
        "vehicle",
        _zh(
            r"^{S}{ADV}(?:开着|开的是|开|买了|换了|换成了|新买了)(?:一辆|一台|辆)?(?:新的?)?"
            r"(?P<v>" + _VEHICLE_ZH + r"|(?i:" + _VEHICLE_EN + r"))"
        ),
    ),
    ("allergic:", _zh(r"^{S}{ADV}(?:不)?对(?P<o>[^，。,]{1,10}?)过敏")),
    ("diet", _zh(r"^{S}{ADV}(?:开始)?(?P<v>吃素|纯素)")),
    (
        "eats:",
        _zh(
            r"^{S}{ADV}(?:不吃|不喝|不能吃|不能喝|忌口|戒了|开始吃|开始喝|又吃|又喝|能吃)"
            r"(?P<o>[^，。,.;；！!？?、（）()了]{1,8})"
        ),
    ),
    ("favourite:", _zh(r"^{S}(?:现在)?最喜欢的(?P<o>[\u4e00-\u9fff]{1,4}?)(?:现在)?是{V}")),
    (
        "likes:",
        _zh(
            r"^{S}{ADV}(?:不喜欢|不爱|讨厌|喜欢|热爱|爱上了|爱)(?!的)(?P<o>[^，。,.;；！!？?、（）()了]{1,8})"
        ),
    ),
    (
        "speaks:",
        _zh(r"^{S}{ADV}(?:会说|会讲|说|在学)(?P<o>[\u4e00-\u9fff]{1,4}?语|中文|英文|普通话)"),
    ),
    (
        "plays:",
        _zh(
            r"^{S}{ADV}(?:会弹|弹|会打|打|踢)(?P<o>钢琴|吉他|小提琴|网球|篮球|羽毛球|足球|"
            r"乒乓球|高尔夫)"
        ),
    ),
    (
        "possessed",
        _zh(
            r"^{S}(?:现在|目前)?的(?:新)?(?P<o>"
            + _POSSESSED_ZH
            + r")(?:现在|已经|目前)*(?P<vb>是|在|换成了|换成|改成了|改成|为|搬到了|搬到|搬去了|搬去)"
            r"{V}"
        ),
    ),
    ("name", _zh(r"^{S}{ADV}(?:叫|名叫)(?P<v>[^，。,.;；！!？?、（）()]{1,10})")),
    ("age", _zh(r"^{S}{ADV}(?:今年)?(?P<v>\d{1,3})岁")),
)
