"""The rule-based extractor (the default; needs nothing external): English and Chinese patterns
for what a user says about themselves — preferences and dislikes, allergies and diet, names and
how to be addressed, work, home, family and pets, languages and instruments, schedules and
standing instructions — plus explicit "remember …/记住…/以后都…" (importance 0.9, seed 000 §4.4)
and corrections ("actually, …"/"不是…而是…"). Only first-person statements in the user's own
turns count; questions, wishes, hypotheticals, past habits, jokes and reported speech (quoted
words, what follows "X said") do not. Each candidate quotes the sentence it
came from and names its turn."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from gateway.core.model.candidates import Candidate, fact_key, slug
from gateway.core.model.models import Turn

NAME = "rules/1"
_CJK = re.compile(r"[\u4e00-\u9fff]")
_SENTENCE = re.compile(r"[^.!?。！？；;\n]+[.!?。！？；;]*")
_QUESTION = re.compile(
    r"[?？]\s*$|^\s*(?:do|does|did|are|is|was|were|can|could|would|will|what|how|why|where|"
    r"when|who|have you|has)\b",
    re.I,
)
_NOT_A_STATEMENT = re.compile(
    r"\b(?:if I|I'd|I would|I wish|I might|I may|maybe|I used to|I should|I could|"
    r"wish I|I wonder|I guess|one day|someday|some day|not any ?more|no longer)\b|"
    r"如果|要是|假如|以前|曾经|不再",
    re.I,
)
#: a question that states a fact ("Remind me why I became a pharmacist?")
_RHETORICAL = re.compile(r"^\s*remind me why\s+(?=I\b)", re.I)
#: a joke is not a fact ("I'm allergic to Monday mornings, ha")
_JOKE = re.compile(
    r"[,，]\s*(?:ha|hah)\b[\s.!]*$|\b(?:ha(?:ha)+|lol|lmao|rofl|kidding|joking|jk)\b|"
    r"开玩笑|😂|🤣",
    re.I,
)
#: someone else's words: a quoted span, or what follows "X said/told me"
_QUOTED = re.compile(r'"[^"]*"|“[^”]*”|「[^」]*」|『[^』]*』|‘[^’]*’')
_REPORTED = re.compile(
    r"\b(?:said|says|say|told me|tells me|telling me|keeps saying|always says|wrote)\b"
    r"|(?:说|告诉我|跟我说)[：:，,]",
    re.I,
)
_EXPLICIT = re.compile(
    r"^\s*(?:please\s+)?(?:remember|don'?t forget|note|keep in mind)\b\s*(?:that\b|:|：|,|，)?\s*"
    r"|^\s*from now on,?\s*|^\s*(?:请)?(?:记住|记下|别忘了|请记得)[：:，,\s]*",
    re.I,
)
_EXPLICIT_ANYWHERE = re.compile(r"以后都|from now on|always remember", re.I)
_CORRECTION = re.compile(r"^\s*(?:actually|correction|sorry,? I meant|no,)\s*[,:，]?\s*", re.I)
_BUT_RATHER = re.compile(r"^(?P<pre>.*?)不是(?P<a>[^，,。]+?)[，,]?\s*而是(?P<b>[^，,。！？]+)")
_TAIL = re.compile(
    r"\s+(?:now|these days|nowadays|at the moment|anymore|any more|too|as well|honestly|"
    r"though|really|actually|lately|recently|for me)$",
    re.I,
)
_CUT = re.compile(
    r"\s+(?:but|because|and|so|since|when|which|who|if|though|although|or|with|at|in|on|for|"
    r"from|during|after|before|while|until)\s.*$|\s*[,，、].*$",
    re.I,
)
_DEICTIC = re.compile(
    r"^(?:it|that|this|these|those|them|you|him|her|the idea|the way|how|what|when|where|"
    r"doing|to do|being|here|there|everything|anything|nothing|something|one|lot|a lot)\b",
    re.I,
)
_TRANSIENT = re.compile(
    r"\b(?:today|tonight|this (?:morning|afternoon|evening|week)|right now|yesterday|"
    r"last night)\b|今天|刚才|昨天|今晚",
    re.I,
)
_JOBS = (
    r"(?:[a-z]+ ){0,2}(?:engineer|developer|programmer|designer|teacher|nurse|doctor|lawyer|"
    r"accountant|architect|chef|cook|pharmacist|dentist|scientist|researcher|journalist|writer|"
    r"editor|photographer|consultant|manager|analyst|librarian|electrician|plumber|mechanic|"
    r"pilot|paramedic|firefighter|vet|veterinarian|therapist|student|professor|lecturer|barista|"
    r"baker|carpenter|translator|surgeon|midwife|farmer|cashier|driver|secretary|receptionist|"
    r"artist|musician|actor|tutor|coach|physiotherapist|nutritionist|officer|clerk|banker)"
)
_INSTRUMENTS = (
    r"piano|guitar|violin|cello|viola|drums|flute|clarinet|saxophone|sax|trumpet|trombone|"
    r"ukulele|harp|bass|banjo|accordion|harmonica|keyboard|oboe|mandolin"
)
_REL = (
    r"sister|brother|wife|husband|partner|boyfriend|girlfriend|fianc[ée]e?|son|daughter|mum|"
    r"mom|mother|dad|father|cousin|aunt|uncle|niece|nephew|grandma|grandmother|grandpa|"
    r"grandfather|best friend|colleague|boss|roommate|old roommate|flatmate|neighbour|neighbor"
)
_PETS = r"cat|dog|puppy|kitten|rabbit|bunny|hamster|parrot|tortoise|turtle|guinea pig|horse|snake|lizard|goldfish"
_LANG_EN = r"[A-Z][a-z]+"
_DIETS = {
    "vegetarian": "vegetarian",
    "vegan": "vegan",
    "pescatarian": "pescatarian",
    "pescetarian": "pescatarian",
    "halal": "halal",
    "kosher": "kosher",
    "gluten-free": "gluten-free",
    "gluten free": "gluten-free",
    "lactose intolerant": "lactose intolerant",
    "lactose-intolerant": "lactose intolerant",
    "coeliac": "gluten-free",
    "celiac": "gluten-free",
    "fish is the only meat i eat": "pescatarian",
    "haven't eaten meat": "vegetarian",
    "have not eaten meat": "vegetarian",
    "dairy": "lactose intolerant",
    "没吃过肉": "素食",
    "除了鱼别的肉都不吃": "只吃鱼不吃肉",
    "乳糖不耐受": "乳糖不耐受",
    "乳糜泻": "不能吃麸质",
    "纯素": "纯素",
    "animal products": "vegan",
    "meat": "vegetarian",
    "肉": "素食",
    "荤": "素食",
}
_COMMUTES = {
    "bike": "cycling",
    "bicycle": "cycling",
    "car": "driving",
    "on foot": "walking",
    "electric scooter": "scooting",
    "scooter": "scooting",
}
_ZH_REL = r"姐姐|妹妹|哥哥|弟弟|老婆|妻子|丈夫|老公|儿子|女儿|妈妈|爸爸|母亲|父亲|表姐|表妹|表哥|表弟|同事|室友|男朋友|女朋友|老板"
_ZH_JOB = r"[\u4e00-\u9fff]{0,5}(?:工程师|设计师|老师|教师|医生|护士|律师|会计|程序员|厨师|学生|研究员|记者|经理|司机|警察|作家|画家|翻译)"


@dataclass(frozen=True, slots=True)
class Rule:
    pattern: re.Pattern[str]
    attr: str  # key under the subject: "diet", or a prefix ending in "." the value is added to
    type: str
    confidence: float
    en: str  # statement templates: {s} subject, {v} value, {x} extra group
    zh: str


def _r(
    pattern: str, attr: str, type_: str, conf: float, en: str, zh: str = "", flags: int = re.I
) -> Rule:
    return Rule(re.compile(pattern, flags), attr, type_, conf, en, zh or en)


_CS = 0  # case-sensitive: the value must be a capitalised name
RULES: tuple[Rule, ...] = (
    # names and how to be addressed
    _r(
        r"\b(?i:my name is|my name's) (?P<v>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)",
        "name",
        "attribute",
        0.8,
        "{s}'s name is {v}",
        flags=_CS,
    ),
    _r(
        r"\b(?i:please call me|call me|address me as|you can call me) (?P<v>[A-Z][\w'-]+)",
        "address_as",
        "preference",
        0.8,
        "{s} wants to be called {v}",
        flags=_CS,
    ),
    _r(r"我叫(?P<v>[\u4e00-\u9fff]{2,4})", "name", "attribute", 0.8, "{s}叫{v}"),
    _r(
        r"(?:请)?叫我(?P<v>[\u4e00-\u9fffA-Za-z]{1,6})",
        "address_as",
        "preference",
        0.8,
        "{s}希望被称为{v}",
    ),
    # diet, allergies, food constraints
    _r(
        r"\bI(?:'m| am) (?:a |an )?(?:strict |now )?(?P<v>vegetarian|vegan|pescatarian|pescetarian|halal|kosher|gluten[- ]free|lactose[- ]intolerant)\b",
        "diet",
        "constraint",
        0.8,
        "{s}'s diet: {v}",
    ),
    _r(
        r"\b(?:I (?:don't|do not|never) eat|I(?:'ve| have) (?:given up|stopped eating)|no) (?P<v>meat|animal products)\b",
        "diet",
        "constraint",
        0.75,
        "{s}'s diet: {v}",
    ),
    _r(
        r"我(?:吃素|是素食者|是素食主义者|不吃(?P<v>肉|荤))",
        "diet",
        "constraint",
        0.8,
        "{s}的饮食：{v}",
    ),
    _r(
        r"\bI(?:'m| am) (?:very |severely |really |properly |seriously |badly |deathly |super )?allergic to (?P<v>[\w -]{2,30})",
        "allergy.",
        "constraint",
        0.85,
        "{s} is allergic to {v}",
    ),
    _r(
        r"\bI have an? (?P<v>[\w -]{2,20}?) allergy\b",
        "allergy.",
        "constraint",
        0.85,
        "{s} is allergic to {v}",
    ),
    _r(r"我对(?P<v>[\u4e00-\u9fff\w]{1,10}?)过敏", "allergy.", "constraint", 0.85, "{s}对{v}过敏"),
    _r(
        r"\bI (?:don't|do not|can't|cannot|never) eat (?P<v>[\w -]{2,30})",
        "avoids.",
        "constraint",
        0.75,
        "{s} does not eat {v}",
    ),
    _r(
        r"我(?:不吃|不能吃|从不吃|忌口)(?P<v>[\u4e00-\u9fff]{1,6})",
        "avoids.",
        "constraint",
        0.75,
        "{s}不吃{v}",
    ),
    # preferences and dislikes
    _r(
        r"\bI (?:really |absolutely |just |totally )?(?:hate|dislike|can't stand|cannot stand|don't like|do not like|don't really like)\s+(?P<v>[^,.;!?]{2,40})",
        "dislikes.",
        "preference",
        0.7,
        "{s} dislikes {v}",
    ),
    _r(
        r"\bI(?:'m| am) not (?:a |a big |a huge )?fan of (?P<v>[^,.;!?]{2,40})",
        "dislikes.",
        "preference",
        0.65,
        "{s} dislikes {v}",
    ),
    _r(
        r"\bI (?:really |absolutely |just |totally )?(?:love|like|enjoy|adore|prefer)\s+(?P<v>[^,.;!?]{2,40})",
        "likes.",
        "preference",
        0.65,
        "{s} likes {v}",
    ),
    _r(
        r"\bI(?:'m| am) (?:a (?:big |huge )?fan of|really into|into|hooked on|obsessed with|addicted to) (?P<v>[^,.;!?]{2,40})",
        "likes.",
        "preference",
        0.65,
        "{s} is into {v}",
    ),
    _r(
        r"\bmy (?:favourite|favorite) (?P<x>[a-z]+(?: [a-z]+)?) (?:is|are) (?P<v>[^,.;!?]{2,40})",
        "favourite.",
        "preference",
        0.75,
        "{s}'s favourite {x} is {v}",
    ),
    _r(
        r"\bI(?:'m| am) an? (?P<v>[\w -]{2,30}?) person\b",
        "likes.",
        "preference",
        0.6,
        "{s} is a {v} person",
    ),
    _r(r"\bmy hobby is (?P<v>[^,.;!?]{2,40})", "hobby.", "preference", 0.7, "{s}'s hobby is {v}"),
    _r(
        r"我(?:不喜欢|讨厌|受不了|不爱)(?P<v>[^，,。！？、]{1,12})",
        "dislikes.",
        "preference",
        0.7,
        "{s}不喜欢{v}",
    ),
    _r(
        r"我(?:很|特别|最|非常|超)?(?:喜欢|爱吃|爱喝|热爱|偏好)(?P<v>[^，,。！？、]{1,12})",
        "likes.",
        "preference",
        0.65,
        "{s}喜欢{v}",
    ),
    # home, work
    _r(
        r"\bI(?: now)? (?i:live|am living|'m living) in (?P<v>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)",
        "home_city",
        "attribute",
        0.75,
        "{s} lives in {v}",
        flags=_CS,
    ),
    _r(
        r"\bI(?:'m| am) (?i:based in|living in) (?P<v>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)",
        "home_city",
        "attribute",
        0.75,
        "{s} lives in {v}",
        flags=_CS,
    ),
    _r(
        r"\bI(?:'ve| have)? (?:just )?(?i:moved to) (?P<v>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)",
        "home_city",
        "attribute",
        0.7,
        "{s} lives in {v}",
        flags=_CS,
    ),
    _r(
        r"\bI(?:'m| am) (?i:originally )?from (?P<v>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)",
        "hometown",
        "attribute",
        0.7,
        "{s} is from {v}",
        flags=_CS,
    ),
    _r(
        r"\bI(?:'ve| have) (?i:lived) in (?P<v>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)",
        "home_city",
        "attribute",
        0.7,
        "{s} lives in {v}",
        flags=_CS,
    ),
    _r(
        r"\b(?i:here in) (?P<v>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)",
        "home_city",
        "attribute",
        0.6,
        "{s} lives in {v}",
        flags=_CS,
    ),
    _r(r"我在(?P<v>[\u4e00-\u9fff]{2,6}?)住了", "home_city", "attribute", 0.7, "{s}住在{v}"),
    _r(
        rf"^(?:being) an? (?P<v>{_JOBS}) has\b",
        "job",
        "attribute",
        0.6,
        "{s}'s job: {v}",
    ),
    _r(
        r"我(?:现在)?(?:住在|家在|搬到了?|定居在)(?P<v>[\u4e00-\u9fff]{2,6}?)(?:市|了|$|，|,|。)",
        "home_city",
        "attribute",
        0.75,
        "{s}住在{v}",
    ),
    _r(
        r"\bI (?:work|am working|'m working) as an? (?P<v>[\w -]{3,40})",
        "job",
        "attribute",
        0.75,
        "{s}'s job: {v}",
    ),
    _r(rf"\bI(?:'m| am)(?: now)? an? (?P<v>{_JOBS})\b", "job", "attribute", 0.7, "{s}'s job: {v}"),
    _r(
        rf"\b(?:I became|I'm starting as|starting as|I started as|I've become) an? (?P<v>{_JOBS})\b",
        "job",
        "attribute",
        0.7,
        "{s}'s job: {v}",
    ),
    _r(
        r"\bI (?i:work) (?i:at|for) (?P<v>[A-Z][\w&'-]+(?: [A-Z][\w&'-]+){0,2})",
        "employer",
        "attribute",
        0.7,
        "{s} works at {v}",
        flags=_CS,
    ),
    _r(
        rf"我(?:现在)?(?:是一名|是一个|是个|是|当)(?P<v>{_ZH_JOB})",
        "job",
        "attribute",
        0.75,
        "{s}的工作：{v}",
    ),
    _r(
        r"我在(?P<v>[\u4e00-\u9fffA-Za-z]{2,12}?)(?:工作|上班)",
        "employer",
        "attribute",
        0.7,
        "{s}在{v}工作",
    ),
    # family, friends, pets
    _r(
        rf"\b(?i:my) (?P<x>(?i:{_REL})) (?:(?i:is called|is named|named|called) )?(?P<v>[A-Z][a-z]+)\b",
        "family.",
        "attribute",
        0.7,
        "{s}'s {x} is called {v}",
        flags=_CS,
    ),
    _r(
        rf"\b(?P<v>[A-Z][a-z]+), (?i:my) (?P<x>(?i:{_REL}))\b",
        "family.",
        "attribute",
        0.7,
        "{s}'s {x} is called {v}",
        flags=_CS,
    ),
    _r(
        rf"我(?:的)?(?P<x>{_ZH_REL})叫(?P<v>[\u4e00-\u9fff]{{1,3}})",
        "family.",
        "attribute",
        0.7,
        "{s}的{x}叫{v}",
    ),
    _r(
        rf"\b(?i:my) (?P<x>(?i:{_PETS})) (?:(?i:is called|called|named) )?(?P<v>[A-Z][a-z]+)\b",
        "pet.",
        "attribute",
        0.7,
        "{s} has a {x} called {v}",
        flags=_CS,
    ),
    _r(
        r"我(?:养了|有)(?:一只|一条|只|条)(?P<x>猫|狗|兔子|仓鼠|鹦鹉)(?:叫|，叫|,叫)(?P<v>[\u4e00-\u9fff]{1,4})",
        "pet.",
        "attribute",
        0.7,
        "{s}养了一只{x}叫{v}",
    ),
    # said in passing, but plainly about the speaker (moderate confidence)
    _r(
        r"\bI(?:'m| am) (?:a )?(?P<v>coeliac|celiac)\b|\b(?P<w>fish is the only meat I eat|I haven't eaten meat|I have not eaten meat)\b|\b(?P<u>dairy) (?:wrecks|upsets|destroys) my stomach",
        "diet",
        "constraint",
        0.7,
        "{s}'s diet: {v}",
    ),
    _r(
        r"我(?:现在)?(?:.{0,6}(?P<v>没吃过肉)|(?P<w>除了鱼别的肉都不吃)|(?P<u>乳糖不耐受)|有(?P<t>乳糜泻)|吃(?P<s>纯素))",
        "diet",
        "constraint",
        0.7,
        "{s}的饮食：{v}",
    ),
    _r(
        r"\b(?i:staying put in|first (?:proper )?(?:week|month) in) (?P<v>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)",
        "home_city",
        "attribute",
        0.6,
        "{s} lives in {v}",
        flags=_CS,
    ),
    _r(
        rf"\b(?:how it is|my life|my job|my first (?:day|week|month)) as an? (?P<v>{_JOBS})\b",
        "job",
        "attribute",
        0.65,
        "{s}'s job: {v}",
    ),
    _r(
        rf"\b(?:an offer|a job offer|a contract) to work as an? (?P<v>{_JOBS})\b",
        "job",
        "attribute",
        0.6,
        "{s}'s job: {v}",
    ),
    _r(rf"当(?P<v>{_ZH_JOB})就是", "job", "attribute", 0.6, "{s}的工作：{v}"),
    _r(
        rf"\b(?P<v>[A-Z][a-z]+), (?i:my) (?P<x>(?i:{_PETS}))\b",
        "pet.",
        "attribute",
        0.7,
        "{s} has a {x} called {v}",
        flags=_CS,
    ),
    _r(
        r"是(?P<v>[\u4e00-\u9fffA-Za-z]{1,8})，我家的(?P<x>猫|狗|兔子|仓鼠|鹦鹉)",
        "pet.",
        "attribute",
        0.7,
        "{s}养了一只{x}叫{v}",
    ),
    _r(
        r"\bI (?:switched|changed|moved) (?:over )?from [\w ]{2,20} to (?P<v>[^,.;!?]{2,30})",
        "likes.",
        "preference",
        0.6,
        "{s} likes {v}",
    ),
    _r(
        r"^(?:我)?(?:最近)?迷上了(?P<v>[^，,。！？、]{1,8})",
        "likes.",
        "preference",
        0.65,
        "{s}喜欢{v}",
    ),
    _r(
        r"吃了(?P<v>[\u4e00-\u9fff]{2,8})，还是最爱",
        "favourite.",
        "preference",
        0.65,
        "{s}最爱吃{v}",
    ),
    _r(
        r"\b(?:news )?from my (?P<v>[a-z][a-z ]{2,25}?) world\b",
        "hobby.",
        "preference",
        0.55,
        "{s}'s hobby is {v}",
    ),
    _r(
        r"\b(?:getting|get|going|go) (?:in|to work) (?P<v>by (?:bike|bicycle|car|train|bus|tram|metro|subway|ferry|electric scooter|scooter)|on foot)\b",
        "commute",
        "attribute",
        0.6,
        "{s} gets to work {v}",
    ),
    # languages, instruments
    _r(
        rf"\bI(?:'m| am| have been|'ve been) (?i:learning|studying) (?P<v>{_LANG_EN})\b",
        "learning.",
        "attribute",
        0.6,
        "{s} is learning {v}",
        flags=_CS,
    ),
    _r(
        rf"\bI (?i:speak) (?i:fluent )?(?P<v>{_LANG_EN})\b",
        "speaks.",
        "attribute",
        0.7,
        "{s} speaks {v}",
        flags=_CS,
    ),
    _r(
        r"我(?:最近)?(?:在学|在学习|学习)(?P<v>[\u4e00-\u9fff]{1,4}[语文])",
        "learning.",
        "attribute",
        0.6,
        "{s}在学{v}",
    ),
    _r(r"我会说(?P<v>[\u4e00-\u9fff]{1,4}[语话])", "speaks.", "attribute", 0.7, "{s}会说{v}"),
    _r(
        rf"\b(?i:my) (?P<v>{_LANG_EN}) (?i:tutor|teacher|lessons?|class|classes|course|streak)\b",
        "learning.",
        "attribute",
        0.6,
        "{s} is learning {v}",
        flags=_CS,
    ),
    _r(
        rf"\b(?i:conversation|a menu|order lunch|ordered lunch) in (?P<v>{_LANG_EN})\b",
        "learning.",
        "attribute",
        0.55,
        "{s} is learning {v}",
        flags=_CS,
    ),
    _r(
        rf"\bI (?:practised|practiced|played) (?:[\w' -]{{1,40}} on )?the (?P<v>{_INSTRUMENTS})\b|\bmy (?P<w>{_INSTRUMENTS}) (?:teacher|lessons?|tutor|recital)\b",
        "plays.",
        "attribute",
        0.65,
        "{s} plays the {v}",
    ),
    _r(
        rf"\bI (?:play|'ve been playing|have been playing|'ve been at|have been at|practise|practice) (?:the )?(?P<v>{_INSTRUMENTS})\b",
        "plays.",
        "attribute",
        0.7,
        "{s} plays the {v}",
    ),
    # schedules and standing instructions
    _r(
        r"\bI (?P<v>(?:work|go \w+|swim|run|train|study|teach|volunteer|have \w+)[^,.;!?]{0,30}?\b(?:every (?:day|morning|evening|weekday|weekend|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|on (?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|weekdays|weekends)|monday to friday))",
        "schedule.",
        "attribute",
        0.6,
        "{s}: {v}",
    ),
    _r(
        r"我(?P<v>(?:每天|每周[一二三四五六日天]?|每个?周末|工作日)[^，,。！？]{1,20})",
        "schedule.",
        "attribute",
        0.6,
        "{s}{v}",
    ),
    _r(
        r"\b(?:reply|answer|respond|write|talk) to me in (?P<v>[A-Z][a-z]+)|\b(?:reply|answer|respond) in (?P<w>[A-Z][a-z]+)",
        "reply_language",
        "preference",
        0.75,
        "{s} wants replies in {v}",
    ),
    _r(
        r"用(?P<v>中文|英文|英语|汉语|日语)(?:回复|回答|交流|和我说话)",
        "reply_language",
        "preference",
        0.75,
        "{s}希望用{v}回复",
    ),
    _r(
        r"\bkeep (?:your |the )?(?:answers|replies|responses) (?P<v>short|brief|concise|detailed)",
        "answer_style",
        "preference",
        0.75,
        "{s} wants {v} answers",
    ),
    _r(
        r"(?:回答|回复)(?:要|请)?(?P<v>简短|简洁|详细)",
        "answer_style",
        "preference",
        0.75,
        "{s}希望回答{v}",
    ),
)


#: a like or a dislike: key ``<who>.taste.<thing>``, value "likes <thing>" / "dislikes <thing>"
#: (Chinese "喜欢…" / "不喜欢…"), so the one contradicts the other (seed 000 §2.3)
_POLAR = {"likes.": ("likes", "喜欢"), "dislikes.": ("dislikes", "不喜欢")}


def _clean(value: str, cut: bool = True) -> str:
    v = value.strip(" \t'\"“”‘’.,!?;:。，！？；：")
    if cut:
        v = _CUT.sub("", v)
    for _ in range(3):
        v2 = _TAIL.sub("", v).strip()
        if v2 == v:
            break
        v = v2
    return v.strip(" '\"“”.,")


def _subject(turn: Turn) -> tuple[str, str, str]:
    """(key part, English label, Chinese label) of whoever said ``turn``."""
    speaker = turn.metadata.get("speaker", "").strip()
    if speaker:
        return slug(speaker) or "user", speaker, speaker
    return "user", "The user", "用户"


def _sentences(text: str) -> Iterator[str]:
    for m in _SENTENCE.finditer(text):
        s = m.group(0).strip()
        if s:
            yield s


class RuleExtractor:
    """``Extractor`` over the patterns above; pure and fast (no I/O)."""

    name = NAME

    async def extract(self, turns: Sequence[Turn]) -> list[Candidate]:
        found: dict[str, Candidate] = {}
        for turn in turns:
            if turn.role != "user":
                continue
            for c in self.from_turn(turn):
                old = found.get(c.pending_key)
                if old is None or c.confidence > old.confidence:
                    found[c.pending_key] = c
        return list(found.values())

    def from_turn(self, turn: Turn) -> Iterator[Candidate]:
        subject = _subject(turn)
        explicit_turn = bool(_EXPLICIT_ANYWHERE.search(turn.content))
        for sentence in _sentences(turn.content):
            yield from self._from_sentence(turn, sentence, subject, explicit_turn)

    def _from_sentence(
        self, turn: Turn, sentence: str, subject: tuple[str, str, str], explicit_turn: bool
    ) -> Iterator[Candidate]:
        text = sentence
        explicit = explicit_turn
        m = _EXPLICIT.match(text)
        if m:
            explicit, text = True, text[m.end() :]
        correction = False
        m = _CORRECTION.match(text)
        if m:
            correction, text = True, text[m.end() :]
        rhetorical = bool(_RHETORICAL.match(text))
        if rhetorical:
            text = _RHETORICAL.sub("", text).rstrip(" ?？")
        if _QUESTION.search(text) or (_NOT_A_STATEMENT.search(text) and not explicit):
            return
        if _JOKE.search(text) and not explicit:
            return
        text = _QUOTED.sub(" ", text)  # reported speech: the quoted words are someone else's
        reported = _REPORTED.search(text)
        if reported:
            text = text[: reported.start()]
        rather = _BUT_RATHER.match(text)
        if rather:
            correction = True
            yield from self._rather(turn, sentence, rather, subject, explicit)
            return
        matched = False
        for c in self._match(turn, sentence, text, subject, explicit, correction):
            matched = True
            yield c
        if explicit and not matched:
            yield self._note(turn, sentence, text, subject)

    def _rather(
        self,
        turn: Turn,
        sentence: str,
        m: re.Match[str],
        subject: tuple[str, str, str],
        explicit: bool,
    ) -> Iterator[Candidate]:
        """ "我不是住在北京，而是上海": read the claim with its object replaced."""
        pre, a, b = m.group("pre"), m.group("a").strip(), m.group("b").strip()
        for c in self._match(turn, sentence, pre + a, subject, explicit, True):
            if a.endswith(c.value):
                value = b
                statement = c.statement[: len(c.statement) - len(c.value)] + b
                key = c.key
                if key.endswith(slug(c.value)):
                    key = key[: -len(slug(c.value))] + slug(b)
                yield Candidate(
                    key, value, statement, c.type, c.confidence, c.quote, c.turn_ids, NAME,
                    c.explicit, True, c.importance,
                )  # fmt: skip

    def _match(
        self,
        turn: Turn,
        sentence: str,
        text: str,
        subject: tuple[str, str, str],
        explicit: bool,
        correction: bool,
    ) -> Iterator[Candidate]:
        who, en, zh = subject
        transient = bool(_TRANSIENT.search(text))
        for rule in RULES:
            for m in rule.pattern.finditer(text):
                groups = m.groupdict()
                raw = next((g for k in "vwuts" if (g := groups.get(k))), "")
                if rule.attr == "diet":  # "我吃素" has no value group: it means vegetarian
                    raw = _DIETS.get((raw or "肉").lower(), raw)
                if rule.attr == "commute":
                    raw = _COMMUTES.get(raw.lower().removeprefix("by ").strip(), raw)
                value = _clean(raw, cut=not rule.attr.startswith("schedule"))
                if not value or _DEICTIC.match(value) or len(value) > 40:
                    continue
                extra = (groups.get("x") or "").lower()
                attr = rule.attr
                polar = attr in _POLAR
                if polar:  # liking and disliking a thing are two values of one fact
                    attr = "taste."
                if attr.endswith("."):  # a family of keys: by relation, or by the value itself
                    attr += slug(extra if attr in ("family.", "favourite.") else value)
                key = fact_key(who, *attr.split("."))
                cjk = bool(_CJK.search(text))
                statement = (rule.zh if cjk else rule.en).format(
                    s=zh if cjk else en, v=value, x=extra
                )
                if polar:
                    value = f"{_POLAR[rule.attr][cjk]}{'' if cjk else ' '}{value}"
                confidence = 0.9 if explicit else 0.85 if correction else rule.confidence
                if transient and not explicit and rule.type == "preference":
                    confidence = min(confidence, 0.5)
                importance = 0.9 if explicit else 0.8 if correction else 0.6
                yield Candidate(
                    key, value, statement, rule.type, confidence, sentence, (turn.id,), NAME,
                    explicit, correction, importance,
                )  # fmt: skip

    def _note(
        self, turn: Turn, sentence: str, text: str, subject: tuple[str, str, str]
    ) -> Candidate:
        """An explicit "remember …" no pattern understood: kept as said."""
        who, en, zh = subject
        value = text.strip(" ：:，,。.")[:200] or sentence
        negative = re.search(r"\b(?:don'?t|never|no|not)\b|不|别|勿", value, re.I)
        words = slug(" ".join(value.split()[:4]) if not _CJK.search(value) else value[:8])
        return Candidate(
            fact_key(who, "note", words or "item"),
            value,
            f"{zh if _CJK.search(value) else en}: {value}",
            "constraint" if negative else "preference",
            0.9,
            sentence,
            (turn.id,),
            NAME,
            explicit=True,
            importance=0.9,
        )
