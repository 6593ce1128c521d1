"""Observations from natural dialogue, no model needed (issue 27): each informative statement a
speaker makes in the first person — about themselves, the people and things in their life,
events, plans, preferences, work and places — rewritten in the third person with the speaker's
name, relative time resolved against the turn's time ("yesterday" → that date), with the turn
and the quoted words as evidence. Greetings, thanks, reactions, questions, wishes and
hypotheticals, farewells and talk about the chat itself form nothing. Pure and fast (no I/O).

Besides "I …" clauses: a time or place said first ("Yesterday I went …"), a subject left out
("Just reading my textbook", "… And slept in on Sunday"), "we" (the speaker and others), "he"/
"she" back to "my uncle" in this turn or the speaker's last, a reply read against the question
before it (``replies``: "have you served a mission?" — "I haven't"), the speaker's people named
in passing ("traveling with my wife" → "Sam has a wife"), and judgements of a named thing
("Java is cool" → "Sam thinks Java is cool")."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime

from gateway.core.model.candidates import Observation
from gateway.core.model.models import Turn
from gateway.extractors import replies, timeref
from gateway.extractors.grammar import IRREGULAR_PAST, STOP, plural, third_person

NAME = "observe/2"

#: where a turn splits into statements: sentence ends, line breaks (one chat message each),
#: laughter and emoticons that end a thought
_SENTENCES = re.compile(
    r"[^.!?\n;]+[.!?;]*|\n",
)
_BREAKS = re.compile(
    r"\s+(?:lol|lmao|haha+|hahaha\w*|ha ha|hehe+|omg|:\)|:\(|:D|;\))(?=\s|$)[.!]*|\.\.\.+\s*|"
    r"\s+\.\.\.+\s*|\s+-+\s+"
    r"|(?=\s+I(?:\s|'m\b))(?:(?<=\bit)|(?<=\bthis)|(?<=\bthem)|(?<=\btoo)|(?<!\bright now)(?<=\bnow)|"
    r"(?<=\byes)|"
    r"(?<=\byeah)|(?<=\bno)|(?<=\btho))\s+(?=I\s|I'm\b)",
    re.I,
)
#: a clause boundary before a new first-person statement ("…, but I …", "… and my brother …")
_CLAUSE = re.compile(
    r"\s*(?:,\s*|\s+)(?:but|and|so|because|cause|cuz|since|though|although|plus|then|while)\s+"
    r"(?=(?:i|i'm|im|i've|ive|i'll|my|me and|he|she|they)\b)|,\s+(?=(?:i|i'm|i've|my)\s)"
    r"|,\s+(?=(?:there is|there's|there was|it is|it's|it was|that's|that is|this is)\s)"
    r"|(?:(?<=\bis)|(?<=\bwas))\s+that\s+(?=(?:i|i'm|i've)\s)",
    re.I,
)
#: discourse markers before a statement
_LEAD = re.compile(
    r"^(?:(?:well|yeah+|yes+|yep|yup|yea|ya|no|nope|nah|oh+|ohh+|ok|okay|so|and|but|also|"
    r"honestly|actually|haha\w*|ha|lol|lmao|wow|um+|uh+|hmm+|plus|then|now|sure|cool|nice|"
    r"same|totally|definitely|really|though|because|cause|like|anyway|anyways|oh well|"
    r"ah+|aw+|omg|dude|man|bro|hey|hi|hello|true|right(?! now)|exactly|awesome|great|ooh|lucky|"
    r"luckily|sadly|unfortunately|fortunately|basically|personally|i mean|of course|sir|k|kk|"
    r"idk|tbh|imo|(?:oh )?my (?:goodness|gosh|god|heck|word))"
    r"\b[\s,!.:;-]*)+",
    re.I,
)
_FIRST = re.compile(
    r"^(?:(?:a couple of|a few of|a lot of|all of|one of|both of|some of|most of) )?"
    r"(?:i|i'm|im|i've|ive|i'll|my|me and my|me and|i'd)\b",
    re.I,
)
#: a wish stated as one ("I'd love to go to Greece", "I would like to travel"): a preference
_WANT = re.compile(
    r"^i(?:'d| would)(?: \w+ly| really| also| just)? (?:love|like|prefer|enjoy) to\b", re.I
)
#: an expectation of one's own milestone is a plan ("I should graduate in April if …")
_EXPECT = re.compile(
    r"^i should (?:be able to )?(?:graduate|finish|be done|be back|be home|start|get there|"
    r"hear back|find out)\b",
    re.I,
)
#: a hope for oneself is a plan ("I hope to get an Australian Shepherd once I graduate")
_HOPE = re.compile(r"^i(?:'m| am)? (?:really |still )?(?:hope|hoping) to\b", re.I)
_QUESTION_START = re.compile(
    r"^(?:do|does|did|are|is|was|were|can|could|would|will|what|how|why|where|when|who|which|"
    r"have you|has|should|shall|may)\b",
    re.I,
)
#: wishes, hypotheticals, guesses and hedges: not a statement of fact
_IRREALIS = re.compile(
    r"\b(?:would|wouldn't|could|couldn't|should|shouldn't|might|may(?!\s+\d)|wish|if|"
    r"someday|hopefully|hope|i'd|id|imagine|suppose|pretend|unless|whether)\b",
    re.I,
)
#: reactions and small talk: "I agree", "I'm good", "I love that", "I know right"
_REACTION = re.compile(
    r"^i(?:'m| am|m)?\s+(?:not\s+)?(?:"
    r"agree|bet|know|guess|mean|see|understand|feel you|hear you|get it|get that|get you|"
    r"think so|believe it|believe you|suppose|totally agree|remember|forgot|"
    r"(?:feel|felt) (?:so |really |pretty |kinda |kind of )?(?:bad|good|sad|happy|terrible|awful|"
    r"better|worse|great|fine)|had (?:so much |a lot of |lots of |a ton of )?fun|had a blast|"
    r"(?:(?:so|really|very|pretty|just|super|a little|a bit|kinda) )*(?:good|fine|well|great|okay|"
    r"ok|alright|doing \w+|happy|cool|hungry|sleepy|"
    r"sorry|glad|happy for|excited for|jealous|not sure|sure|down|in|here|back|ready|done|"
    r"confused|curious|kidding|joking|serious|impressed|honored|flattered|lost|so lucky|lucky|"
    r"terrified|scared|afraid|excited|nervous|stressed|tired|exhausted|bored|sad|upset|mad|angry|"
    r"jealous|thrilled|relieved|surprised|shocked|worried|amazed|dying|dead)|"
    r"(?:can't|cannot|don't|do not) (?:even )?(?:remember|know(?! (?:too |very |that )?(?:much|"
    r"a lot|a thing|anything) about)|pick|decide|tell|wait|say)"
    r"[\w\s]*|"
    r"(?:totally |completely )?understand (?:that|the|what)[\w\s]*|"
    r"not (?:really |totally |entirely |too |so |quite )?sure (?:what|if|whether|how|why|where|when|"
    r"who|about)\b[\w\s']*|"
    r"was (?:just )?wondering[\w\s]*|(?:have|had) no idea[\w\s]*|"
    r"(?:have|had) (?:heard|seen|thought|done)(?: (?:a lot )?about (?:it|that|this))?"
    r")(?:\s+(?:too|then|now|though|tho|lol|haha|thanks|man|dude|ha|right))*[\s.!,]*$",
    re.I,
)
_DEICTIC_OBJECT = re.compile(
    r"^i\s+(?:\w+ly\s+|just\s+|really\s+|also\s+|totally\s+)?(?:love|like|loved|liked|enjoy|"
    r"enjoyed|hate|hated|agree with|feel|felt|think|thought|did|do|have|had|know|knew|saw|"
    r"see|remember|get|got|want|need|miss|read|watched|played|tried)\s+"
    r"(?:it|that|this|them|those|these|one(?=\s*(?:too|as well|also|of (?:those|them)|[.!,]|$))|"
    r"you|him|her|so|too|the same)\b",
    re.I,
)
#: the chat itself, greetings, thanks and farewells
_META = re.compile(
    r"\b(?:chat|chatting|chats|convo|convos|conversations?|talking to you|talk to you|talk with|"
    r"talking with|matched|match|this game|this challenge|the challenge|"
    r"(?:gotta|got to|have to|need to|going to) go(?=\s*(?:now|soon|[.!,]|$))|gtg|head out|"
    r"get going|"
    r"nice (?:talking|chatting|meeting)|thank|thanks|bye|good night|goodnight|"
    r"your question|that question|this question|the question|answer|typing|type|tabs?|"
    r"respond|responding|reply|message|messages|sorry for|prompt|prompts)\b",
    re.I,
)
#: a view of the world or hearsay, not something about the speaker ("I think robots will…",
#: "I've heard great danes are…"); "I think I'll…" was already cut to "I'll…"
_OPINION = re.compile(
    r"^i(?:'ve| have)?\s+(?:\w+ly\s+)?(?:think|thought|feel like|felt like|guess|believe|"
    r"suppose|heard|hear|read that|assume|doubt|didn't know|did not know|"
    r"(?:don't|do not|can't|cannot) (?:see|understand|get) (?:why|how)|"
    r"(?:don't|do not) know (?:why|if|whether|what|how|where|who|when)|"
    r"know (?:that )?(?!how\b)[a-z]+(?: [a-z]+){0,3} (?:is|are|was|were|will|can)\b)",
    re.I,
)
#: certainty about the world ("I'm almost positive we will have a new president")
_CERTAIN = re.compile(
    r"^i(?:'m|m| am)\s+(?:almost |pretty |fairly |so |very )?(?:positive|sure|certain|"
    r"convinced)\b(?! (?:of|about) (?:my|it|that|this)\b)",
    re.I,
)
_YOU = re.compile(r"\b(?:you|your|you're|youre|ya|u|ur|yours)\b", re.I)
_THINK = re.compile(
    r"^i(?:'ve| have)?\s+(?:always\s+|just\s+)?(?:think|feel like|believe|guess|suppose|know|"
    r"figure|realized|realised|said|say)\s+(?:that\s+)?"
    r"(?=(?:i|i'm|im|i've|i'll|my)\b)",
    re.I,
)
_TAIL = re.compile(
    r"[\s,]*(?:(?<!\w)(?:lol|lmao|haha\w*|ha|hehe\w*|haha|xd|too|as well|though|tho|honestly|"
    r"hahaha|lololol|lolol|ahha|hah)|:\)|:\(|:D|;\)|!+|\.+)\s*$",
    re.I,
)
#: a statement needs at least this many content words past its subject
MIN_CONTENT_WORDS = 2


def speaker_for(turn: Turn, namespace: str = "") -> str:
    """The speaker's name: the turn's ``speaker`` metadata, else the namespace's user
    (``user/alice`` → "Alice"), else "The user"."""
    named = turn.metadata.get("speaker", "").strip()
    if named:
        return named[:60]
    parts = namespace.split("/")
    if len(parts) == 2 and parts[0] == "user" and re.fullmatch(r"[A-Za-z][a-z]{1,30}", parts[1]):
        return parts[1].title()
    return "The user"


def observe(turns: Sequence[Turn], namespace: str = "", role: str = "user") -> list[Observation]:
    """Every observation in ``turns`` said by ``role``, in order; a short answer reads the
    other speaker's question before it ("what's your major?" — "Biology"), and "he"/"she"
    after "my brother"/"my sister" is that person."""
    out: list[Observation] = []
    before: Turn | None = None
    known: set[str] = set()  # the speaker's people already said to be theirs
    people = _People()  # "he" in the next turn is still "my uncle" of the last one
    for turn in turns:
        if turn.role != role:
            before = turn
            people.heard(turn.content)
            continue
        out.extend(from_turn(turn, speaker_for(turn, namespace), before, known, people))
        before = None
    return out


def from_turn(
    turn: Turn,
    name: str,
    before: Turn | None = None,
    known: set[str] | None = None,
    people: _People | None = None,
) -> Iterator[Observation]:
    """The observations of one turn; ``known``: the speaker's people already observed, and
    ``people``: whom "he"/"she"/"they" point to (both shared across the turns of a
    conversation, updated here)."""
    people = _People() if people is None else people
    seen: set[str] = set()
    found = []
    topic = replies.topic(before.content) if before is not None else ""
    for clause, carried in dated_clauses(turn.content):
        if topic and _LIKED_IT.match(clause):  # "how do you like BYU?" — "I'm loving it!"
            clause = _LIKED_IT.sub(lambda m: m.group(0)[:-2] + topic, clause, count=1)
        if _PRONOUN.match(clause):
            clause = people.resolve(clause)
            if not clause:
                continue
        else:
            people.note(clause)
        found.append(_observation(clause, name, turn, carried=carried))
    if before is not None:
        found.append(_answer(before.content, turn, name) or _reply(before.content, turn, name))
    found.extend(_judged(turn, name))
    found.extend(_kin(turn, name, [o for o in found if o is not None], known))
    kept = [o for o in found if o is not None]
    asked = _asked_when(before) if before is not None else None
    if asked is not None:  # "what did you do over the weekend?" — "I went to Boise"
        kept = [_dated(o, asked) for o in kept]
    if _clock_today(turn.content):
        # "I'm going to a temple walk … so I'll come over at like 4 ish": a plan for today
        today = timeref.resolve("today", turn.at)
        kept = [_dated(o, replace(today, future=True)) if today else o for o in kept]
    words = [frozenset(re.findall(r"[\w']+", o.text.lower())) for o in kept]
    for obs, mine in zip(kept, words, strict=True):
        if obs.text.lower() in seen or any(mine < other for other in words):
            continue  # said already, or all of it in a fuller one ("is in X" < "is rooming in X")
        seen.add(obs.text.lower())
        yield obs


def _asked_when(before: Turn) -> timeref.When | None:
    """The time the other speaker's last question asks about ("did you do anything fun over
    the weekend?"), resolved against when they asked."""
    questions = [q for q in re.findall(r"[^.!?\n]*\?", before.content) if q.strip()]
    if not questions or not _ASKS_WHAT_DONE.search(questions[-1]):
        return None  # "excited for BYU in the fall?" asks no time of an answer
    return timeref.resolve(questions[-1], before.at)


#: a time of day with no day said ("at 4", "at like 4 ish", "around 7:30pm", "at noon")
_CLOCK = re.compile(
    r"\b(?:at|around|by|until|till) (?:like |about |around )?(?:\d{1,2}(?::\d\d)? ?(?:ish|am|pm|"
    r"o'clock)?|noon)\b|\b\d{1,2}(?::\d\d)? ?(?:ish|am|pm|o'clock)\b",
    re.I,
)
#: ... and the words that name a day, which make the time of day another day's
_DAY_WORD = re.compile(
    r"\b(?:tomorrow|tmrw|yesterday|tonight|monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday|weekend|next|last|ago|day|days|week|weeks|month|year|morning|every|usually|always)\b",
    re.I,
)


def _clock_today(text: str) -> bool:
    """Whether a sentence of ``text`` says a time of day and no day: that day is today."""
    return any(
        _CLOCK.search(m.group(0))
        and not _DAY_WORD.search(m.group(0))
        and not m.group(0).rstrip().endswith("?")
        for m in _SENTENCES.finditer(text)
    )


_ASKS_WHAT_DONE = re.compile(
    r"\b(?:do|doing|did|done|up to|plans?|planning|how was|how'd|how did|go|going|went)\b", re.I
)


def _dated(o: Observation, asked: timeref.When) -> Observation:
    """``o`` at the time the question asked about, when it said none of its own and is of
    that time: a past event for a question about the past, a plan for one about the future."""
    if o.when or o.type != ("plan" if asked.future else "event"):
        return o
    text = f"{o.text.rstrip('.')} {asked.words}."
    return replace(o, text=text, when=asked.label, event_time=asked.start)


_LIKED_IT = re.compile(
    r"^i(?:'m| am)? (?:(?:\w+ly|really|so|just|also|still|totally) )*(?:love|like|enjoy|hate|"
    r"loving|liking|enjoying|hating|loved|liked|enjoyed|hated) it\b",
    re.I,
)

_HE = (
    "brother|dad|father|uncle|boyfriend|bf|husband|son|grandpa|grandfather|nephew|fiance|"
    "roommate|friend|cousin|boss"
)
_SHE = (
    "sister|mom|mum|mother|aunt|girlfriend|gf|wife|daughter|grandma|grandmother|niece|fiancee|"
    "roommate|friend|cousin|boss"
)
_THEY = "parents|roommates|friends|cousins|siblings|brothers|sisters|kids|family|grandparents"
_RELATIVE = re.compile(
    r"\bmy ((?:twin |older |younger |little |big |best |baby |step)?"
    rf"(?:{_HE}|{_SHE}|{_THEY}))\b",
    re.I,
)
_PRONOUN = re.compile(r"^(he|she|they)(?:'s|'re| is| are| was| were|\s)", re.I)
_OTHERS = {  # what in the other speaker's turn makes a pronoun unclear
    "he": re.compile(rf"\b(?:he|him|his|he's|my (?:{_HE}))\b", re.I),
    "she": re.compile(rf"\b(?:she|her|hers|she's|my (?:{_SHE}))\b", re.I),
    "they": re.compile(rf"\b(?:they|them|their|they're|my (?:{_THEY}))\b", re.I),
}


class _People:
    """The last person of each gender (and group) the speaker named as "my …"."""

    def __init__(self) -> None:
        self._last: dict[str, str] = {}

    def note(self, clause: str) -> None:
        for m in _RELATIVE.finditer(clause):
            who = m.group(1).lower()
            base = who.split()[-1]
            for pronoun, names in (("he", _HE), ("she", _SHE), ("they", _THEY)):
                if re.fullmatch(names, base):
                    self._last[pronoun] = who
            if base in ("roommate", "friend", "cousin", "boss"):  # either: not a clear referent
                self._last.pop("he", None) if "she" in self._last else None

    def heard(self, text: str) -> None:
        """The other speaker spoke: a "he"/"she"/"they" of theirs, or a person of their own,
        leaves that pronoun unclear in the next turn."""
        for pronoun, rx in _OTHERS.items():
            if rx.search(text):
                self._last.pop(pronoun, None)

    def resolve(self, clause: str) -> str:
        """``clause`` with its leading pronoun as "my <person>", or '' when unclear."""
        m = _PRONOUN.match(clause)
        assert m is not None
        who = self._last.get(m.group(1).lower())
        if who is None:
            return ""
        rest = clause[len(m.group(1)) :]
        rest = re.sub(r"^'s\b", " is", rest)
        rest = re.sub(r"^'re\b", " are", rest)
        return f"my {who}{rest}"


#: the speaker's judgement of a named thing ("Java is cool though", "CS 330 is also not bad")
_JUDGED = re.compile(
    r"^(?P<np>(?:the )?(?:[A-Z][\w'-]*|[A-Z]{2,} \d+)(?: (?:[A-Z][\w'-]*|\d+))*"
    r"(?: ones?| series| books?| movies?| class| classes| shows?| games?)?) "
    r"(?P<says>(?:is|was|are|were|sounds|seems|looks)(?: (?:\w+ly|so|really|pretty|super|also|not|still|kind of|too|"
    r"very|just|a little))* (?:good|great|cool|awesome|amazing|fun|funny|bad|terrible|boring|hard|"
    r"easy|interesting|beautiful|nice|scary|weird|overrated|underrated|the best|the worst|"
    r"fantastic|incredible|horrible|awful|delicious|gross|annoying|hilarious|difficult|"
    r"challenging|crazy))\b",
)
_NOT_NAMES = frozenset(
    [
        "The",
        "It",
        "That",
        "This",
        "There",
        "They",
        "He",
        "She",
        "You",
        "We",
        "What",
        "Which",
        "Who",
        "Everything",
        "Everyone",
        "Nothing",
        "Something",
        "Life",
        "School",
        "Work",
        "Today",
        "Yesterday",
        "Tomorrow",
    ]
)


def _judged(turn: Turn, name: str) -> Iterator[Observation]:
    """What the speaker says of a thing named by its name (capitalised, or a course number):
    "Java is cool" → "Sam thinks Java is cool"; not of "it", "that" or things in general."""
    text = _BREAKS.sub(". ", normalise(turn.content))
    for m in _SENTENCES.finditer(text):
        sentence = _LEAD.sub("", m.group(0).strip()).strip()
        j = _JUDGED.match(sentence)
        if j is None or j.group("np").split()[-1] in _NOT_NAMES or "?" in sentence:
            continue
        if j.group("np").split()[0] == "The" and not re.search(r" [A-Z]", j.group("np")):
            continue  # "The books were good": no name in it
        yield _made(f"{name} thinks {j.group(0)}", "preference", turn, sentence, name)


_KIN = re.compile(
    r"\bmy ((?:twin |older |younger |little |big |baby |step ?)?(?:brothers?|sisters?|siblings?|"
    r"dad|father|mom|mum|mother|parents|wife|husband|boyfriend|bf|girlfriend|gf|fiance|fiancee|"
    r"sons?|daughters?|kids|children|grandma|grandpa|grandmother|grandfather|grandparents|"
    r"uncles?|aunts?|cousins?|nephews?|nieces?|twin|dog|cat|dogs|cats))\b",
    re.I,
)
_SPELLED = {"bf": "boyfriend", "gf": "girlfriend"}
_PARTNERS = frozenset(["wife", "husband", "boyfriend", "girlfriend", "fiance", "fiancee"])


def _kin(
    turn: Turn, name: str, found: list[Observation], known: set[str] | None
) -> Iterator[Observation]:
    """The speaker's family and pets named in passing ("traveling with my wife", "that's what
    my older sister says"): "Sam has a wife", once, when nothing else observed says it."""
    known = set() if known is None else known
    said = " ".join(o.text.lower() for o in found)
    for m in _KIN.finditer(normalise(turn.content)):
        who = m.group(1).lower()
        who = " ".join(_SPELLED.get(w, w) for w in who.split())
        formed = f"{name.lower()}'s {m.group(1).lower()}" in said and who not in _PARTNERS
        if who in known or formed:  # a partner is a status of the speaker's: said on its own
            known.add(who)
            continue
        known.add(who)
        article = "" if who.endswith(("s", "children")) else "an " if who[0] in "aeiou" else "a "
        yield _made(f"{name} has {article}{who}.", "fact", turn, m.group(0), name)


#: questions whose short answer is a fact about the one answering, and how to say it
_ASKED = [
    (
        re.compile(
            r"what(?:'s| is| was| are) (?:your|ur) (?P<what>(?:(?:favou?rite|dream|"
            r"least favou?rite) )?[a-z]+(?: [a-z]+)?)\s*\??\s*$",
            re.I,
        ),
        "{name}'s {what} is {answer}.",
    ),
    (re.compile(r"where (?:are |r )?(?:you|u) from\b", re.I), "{name} is from {answer}."),
    (re.compile(r"where do (?:you|u) live\b", re.I), "{name} lives in {answer}."),
    (
        re.compile(r"what (?:are|r) (?:you|u) (?:studying|majoring in)\b", re.I),
        "{name}'s major is {answer}.",
    ),
    (re.compile(r"how old (?:are|r) (?:you|u)\b", re.I), "{name} is {answer} years old."),
]
_SAME = re.compile(
    r"^(?:(?:oh|yes|yeah|haha|omg)\W+)*(?:me too|same here|same|so do i|i do too|me as well|"
    r"i do as well|i also do)\b[\s!.,]*",
    re.I,
)
_SHORT_ANSWER = 6  # words: a longer reply says more than the answer


def _answer(asked: str, turn: Turn, name: str) -> Observation | None:
    """A short reply to the other speaker's question about the one replying, or "me too" to
    their own statement, as an observation about the one replying."""
    reply = turn.content.strip().split("\n")[0]
    last = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n", asked.strip()) if s.strip()]
    if not last:
        return None
    if _SAME.match(reply):  # "me too" says the other's last statement of themselves again
        statements = [
            _LEAD.sub("", s).strip(" .!;")
            for line in last
            for s in re.split(r"(?<=[.!;])\s+", normalise(line))
            if len(s.split()) >= 3  # not a one-word correction ("*peppermint")
        ]
        said = statements[-1] if statements else ""
        if not re.match(r"^i\b", said, re.I) or said.endswith("?"):
            return None
        return _observation(_THINK.sub("", said), name, turn, quote=reply)
    answer = _TAIL.sub("", _LEAD.sub("", reply)).strip(" .!,")
    if (
        not answer
        or len(answer.split()) > _SHORT_ANSWER
        or answer.endswith("?")
        or _FIRST.match(answer)
        or _YOU.search(answer)
        or _REACTION.match(f"I'm {answer}")
        or answer.lower() in STOP
    ):
        return None
    for pattern, template in _ASKED:
        m = pattern.search(last[-1])
        if m is None:
            continue
        what = (m.groupdict().get("what") or "").lower()
        text = template.format(name=name, what=what, answer=answer)
        return _made(
            text,
            "fact" if "favo" not in what and "dream" not in what else "preference",
            turn,
            reply,
            name,
        )
    return None


#: contractions typed without their apostrophe ("dont", "wont", "thats")
_BARE = {
    w.replace("'", ""): w
    for w in [
        "don't",
        "doesn't",
        "didn't",
        "won't",
        "can't",
        "isn't",
        "wasn't",
        "aren't",
        "weren't",
        "haven't",
        "hasn't",
        "hadn't",
        "wouldn't",
        "couldn't",
        "shouldn't",
        "i've",
        "that's",
        "what's",
        "he's",
        "she's",
        "they're",
    ]  # not "its": a word of its own
}
_BARE_RX = re.compile(r"\b(?:" + "|".join(_BARE) + r")\b", re.I)


def normalise(text: str) -> str:
    """Curly apostrophes straightened, and the apostrophe put back in a contraction typed without
    it ("i dont" → "i don't"); "I'ts" → "It's"; "I gtg to a lab" → "I have to go to a lab"."""
    text = text.replace("\u2019", "'")
    text = re.sub(r"\bI'ts\b", "It's", text)
    text = re.sub(r"\b(?:gtg|gotta go) to\b", "have to go to", text, flags=re.I)
    return _BARE_RX.sub(lambda m: _case(m.group(0), _BARE[m.group(0).lower()]), text)


def _case(typed: str, word: str) -> str:
    return word[0].upper() + word[1:] if typed[0].isupper() else word


def _reply(asked: str, turn: Turn, name: str) -> Observation | None:
    """A yes or no to the other speaker's question, or a short answer that fills its gap, as
    the statement it makes (``replies``)."""
    reply = normalise(turn.content).strip()
    said = replies.polar(asked, reply.split("\n")[0]) or replies.fills(asked, reply)
    if not said or _META.search(said):
        return None
    return _observation(said, name, turn, quote=reply.split("\n")[0], literal=True)


def clauses(text: str) -> Iterator[str]:
    """The statements of a turn, one per clause that starts with the speaker."""
    for clause, _ in dated_clauses(text):
        yield clause


def dated_clauses(text: str) -> Iterator[tuple[str, str]]:
    """``clauses``, each with the time phrase it carries over from an earlier clause of its
    sentence ("Last night I went to a play, then I watched Harry Potter": "last night" for the
    second), or ''. Carried when the clause says no time of its own, in a tense that fits the
    phrase: done ("watched", "have learned") after a past or present time, a plan after a
    future one."""
    text = _BREAKS.sub(". ", normalise(text))
    mine = False  # the last statement was the speaker's: "… And slept in on Sunday" is too
    for m in _SENTENCES.finditer(text):
        sentence = m.group(0).strip()
        if not sentence or _is_question(sentence):
            continue
        said: timeref.When | None = None  # the last time phrase of this sentence
        for part in _CLAUSE.split(sentence):
            own = timeref.resolve_all(part, _ANY_DAY)
            part = _LEAD.sub("", _UNSURE.sub("", part.strip(" ,;:-()"))).strip()
            part = _THINK.sub("", _fronted(_WHEN_I.sub("", part)))
            if part and mine and _DROPPED_PAST.match(part):
                part = f"I {part[0].lower()}{part[1:]}"
            elif part and _DROPPED_BE.match(part):
                part = f"I'm {part[0].lower()}{part[1:]}"
            carried = "" if own or said is None or not _fits(part, said) else said.phrase
            said = own[-1] if own else said
            if part and (
                _FIRST.match(part) or _PRONOUN.match(part) or _WE.match(part) or _MINE.match(part)
            ):
                mine = True
                yield part.rstrip("?").strip(), carried
            elif part:
                mine = False


#: any day: ``dated_clauses`` only asks which words are a time phrase, not what they resolve to
_ANY_DAY = datetime(2000, 1, 1, tzinfo=UTC)
_DONE = re.compile(r"^(?:i|we)(?:'ve| have| had)? +(?:just +|also +|finally +)?\w+ed\b", re.I)
_DONE_IRREGULAR = re.compile(
    r"^(?:i|we)(?:'ve| have| had)? +(?:just +|also +|then +|finally +)?(\w+)\b", re.I
)


_OWN_TIME = re.compile(
    r"\b(?:the other day|recently|lately|ago|once|earlier|back then|a while|before|when|"
    r"at (?:the|that) time|years?|months?|weeks?|days?)\b",
    re.I,
)


def _fits(clause: str, said: timeref.When) -> bool:
    """Whether a clause with no time of its own happened in (or is planned for) ``said``."""
    if _OWN_TIME.search(clause):  # "the other day", "recently": a time of its own, unresolved
        return False
    if said.future:
        return bool(timeref.FUTURE_TENSE.search(clause))
    if said.phrase.lower() in ("now", "right now"):  # a moment, not a period to have done in
        return False
    if timeref.FUTURE_TENSE.search(clause):
        return False
    if _DONE.match(clause):
        return True
    m = _DONE_IRREGULAR.match(clause)
    return m is not None and m.group(1).lower() in IRREGULAR_PAST


#: "I don't know, it just seems right": a shrug before what is said, not a statement
_UNSURE = re.compile(
    r"^(?:i (?:don't|do not) know|i dunno|i guess|i mean|(?:like |as )?i said)\s*[,.!]+\s*", re.I
)
#: a time or place put before the speaker ("Yesterday I went …", "before my mission I had
#: never …"): it goes after the statement, which then starts with the speaker
_FRONTED = re.compile(
    r"^(?P<adv>(?!at least\b|at first\b|in fact\b|of course\b|in general\b)"
    r"(?:yesterday|today|tonight|tomorrow|recently|lately|right now|last (?:night|week|month|year|"
    r"semester|summer|weekend)|this (?:morning|afternoon|evening|week|weekend|semester|summer|"
    r"year)|next (?:week|month|year|semester|summer)|(?:before|after|during|in|at|on|over|"
    r"back in) [^,.!?]{1,40}?|(?:when i was|as a|since|growing up|once|as soon as|when|after|"
    r"before|until|till) \b[^,.!?]{0,40}(?=,)))"
    r"(?:,\s*(?P<rest>(?:i|i'm|i've|i'll|i'd|my|me and)\s.*)|"
    r"\s+(?P<bare>(?:i|i'm|i've|i'll|i'd)\s.*))$",
    re.I,
)
#: a thing said to be the speaker's ("Math is my best subject", "Inception is my favorite")
_MINE = re.compile(
    r"^(?!(?:it|that|this|there|which|what|who|he|she|they|you|everything|nothing)\b)"
    r"[a-z][\w'-]*(?: [\w'-]+){0,2} (?:is|are|was|were)(?: (?:definitely|probably|also|still|"
    r"always|totally))? my \w",
    re.I,
)
#: the speaker with others ("We won 3 of the 4"), not "we'll see"
_WE = re.compile(r"^(?:we|we're|we've|we'll|we all)\s(?!see\b)", re.I)
#: "the day I was voted homecoming queen": the time named by what the speaker did
_WHEN_I = re.compile(
    r"^(?:the|that) (?:day|time|night|moment|year|summer|week|weekend|semester) (?:when |that )?"
    r"(?=(?:i|i'm|i've|my)\s)",
    re.I,
)
#: "And slept in on Sunday" after "I went to Boise": the speaker said before the verb
_DROPPED_PAST = re.compile(
    r"^(?:"
    + "|".join(sorted(IRREGULAR_PAST - {"read", "let", "put", "set", "cut", "hit"}))
    + r")\s+\w",
    re.I,
)
#: "Just reading my astronomy textbook": "I'm" dropped before what the speaker is doing
_DROPPED_BE = re.compile(
    r"^(?:just|still|currently|now|also|mostly)\s+(?!kidding|joking|saying|wondering|"
    r"curious)[a-z]+ing\s+\w",
    re.I,
)


def _fronted(part: str) -> str:
    m = _FRONTED.match(part)
    if m is None:
        return part
    rest = re.sub(r"\s+(?:though|tho)$", "", (m.group("rest") or m.group("bare")).rstrip(" .!"))
    adv = m.group("adv")  # its first word is an ordinary one ("Yesterday", "Right now", "In March")
    return f"{rest} {adv[:1].lower()}{adv[1:]}"


def _is_question(sentence: str) -> bool:
    stripped = _LEAD.sub("", sentence)
    return sentence.rstrip().endswith("?") and (
        bool(_QUESTION_START.match(stripped)) or not _FIRST.match(stripped)
    )


def _observation(
    clause: str, name: str, turn: Turn, quote: str = "", literal: bool = False, carried: str = ""
) -> Observation | None:
    """``clause`` as an observation; ``literal``: built from a question and its answer, so its
    hedges and "if"s are the question's, not doubt of the speaker's; ``carried``: a time phrase
    said earlier in its sentence (``dated_clauses``), used when the clause says none."""
    quote = quote or clause.strip()
    text = _TAIL.sub("", clause.strip()).strip()
    for _ in range(2):
        text = _TAIL.sub("", text).strip()
    if _REACTION.match(text) or _DEICTIC_OBJECT.match(text) or _OPINION.match(text):
        return None
    if _CERTAIN.match(text):
        return None
    text = _DANGLING.sub("", _ASIDE.sub("", text if literal else _before_doubt(text))).strip()
    if not text or _REACTION.match(text) or _DEICTIC_OBJECT.match(text):
        return None
    if _ELLIPSIS.search(text) or _BARE_PREDICATE.match(text) or _VERBLESS.match(text):
        return None
    if len(text.split()) <= _VAGUE_WORDS and _VAGUE.search(text):
        return None
    words = [w for w in re.findall(r"[a-z']+", text.lower()) if w not in STOP]
    if len(words) + bool(_HAVE_LIKE.match(text) or _UNCONTRACTED.match(text)) < MIN_CONTENT_WORDS:
        return None
    whens = timeref.resolve_all(text, turn.at)
    if not whens and carried:  # resolved as if said here; the time goes at the end
        whens = timeref.resolve_all(f"{text} {carried}", turn.at)
    when = whens[0] if whens else None
    body = third_person(plural(text, name), name)
    return _made(timeref.rewrite(body, whens), _kind(text, when), turn, quote, name, when, True)


def _made(
    body: str,
    kind: str,
    turn: Turn,
    quote: str,
    name: str,
    when: timeref.When | None = None,
    rewritten: bool = False,
) -> Observation:
    if when is not None and not rewritten:
        body = when.rewrite(body)
    body = body[0].upper() + body[1:]
    if not body.endswith("."):
        body += "."
    return Observation(
        text=body,
        type=kind,
        stable=kind in ("fact", "preference"),
        when=when.label if when is not None else "",
        event_time=when.start if when is not None else turn.at,
        turn_ids=(turn.id,),
        quote=quote[:500],
        confidence=0.7 if kind in ("fact", "preference") else 0.6,
        entities=_entities(quote, name),
        speaker=name,
    )


#: a short statement whose object is no thing in particular: "I'll figure something out"
_VAGUE = re.compile(
    r"\b(?:something|anything|nothing|everything)(?: else)?(?: out| up)?[\s.!,]*$", re.I
)
_VAGUE_WORDS = 5
#: a verb phrase left out, to be read from what was said before ("I'm glad my brother did")
_ELLIPSIS = re.compile(
    r"(?<!\bto )\b(?:did|do|does|didn't|don't|doesn't|is|isn't|was|wasn't|are|am|were|have|has|had|"
    r"haven't|hasn't|can|can't|will|won't)[\s.!,]*$|^i(?:'ve|'m|'ll|'d)?[\s.!,]*$",
    re.I,
)
#: one word past the subject and its auxiliaries says nothing on its own ("I've wanted",
#: "I'm crying", "I didn't care"); "I surf" is already too short
_BARE_PREDICATE = re.compile(
    r"^i(?:'ve|'d|'ll)?(?:\s+(?:have|had|do|did|don't|didn't|do not|did not|not|really|"
    r"just|also|still|never|kinda|so|was|will))*\s+[a-z]+[\s.!,]*$"
    # "I'm crying", "I am so leaving": a doing, not a state ("I'm vegan" is one: kept)
    r"|^i(?:'m|\s+am)(?:\s+(?:not|really|just|also|still|so|kinda))*\s+[a-z]+ing[\s.!,]*$",
    re.I,
)
#: "my personal opinion", "my bad": the speaker's thing, said of nothing
_VERBLESS = re.compile(r"^my(?: [a-z]+){1,2}[\s.!,]*$", re.I)
#: "I like X", "I have a dog": the verb is the content ("like" and "have" are stop words)
_HAVE_LIKE = re.compile(
    r"^i\s+(?:\w+ly\s+|really\s+|also\s+|just\s+|still\s+)*(?:like|liked|have|had|"
    r"have got|own)\s+(?!(?:it|that|this|them|those|these|one|you|to|an? (?:question|confession|"
    r"idea|suggestion|story))\b)\w",
    re.I,
)
#: "I really am going to …" counts as "I'm going to …" does ("i'm" is no stop word)
_UNCONTRACTED = re.compile(r"^i\s+(?:\w+ly\s+|really\s+|just\s+|also\s+)?(?:am|will)\b", re.I)
#: a trailing aside about what was just said (", loving it", ", hated that")
_ASIDE = re.compile(r"\s*[,;-]\s*(?:\w+ing|loved|hated|liked) (?:it|that|this)\W*$", re.I)
#: a clause cut short ends on no function word ("... for so long that")
_DANGLING = re.compile(
    r"(?:\s+(?:that|to|about|of|the|a|an|is|for|with|like|and|but|so|because|when|if|at|in|"
    r"on|my|was|are|than|what|how|it))+[\s.!,]*$",
    re.I,
)
_BOUNDARY = re.compile(
    r"\s*[,;:(]\s*|\s+(?:so|and|but|because|cause|cuz|when|while|since|that|which|who|or|"
    r"though|until|to see|just)\s+",
    re.I,
)


def _before_doubt(text: str) -> str:
    """``text`` up to the clause boundary before the first wish, hedge, "you" or chat talk in
    it ("I'm not the best driver so probably I'd run into something" → "I'm not the best
    driver"); '' when that leaves nothing."""
    want = _WANT.match(text) or _HOPE.match(text) or _EXPECT.match(text)
    skip = want.end() if want else 0
    hits = [
        m.start()
        for rx in (_IRREALIS, _META, _YOU)
        for m in [rx.search(text, skip)]
        if m is not None
    ]
    if not hits:
        return text
    cut = min(hits)
    bounds = [m.start() for m in _BOUNDARY.finditer(text, 0, cut) if m.start() > skip]
    if not bounds and want and re.match(r"(?:if|unless)\b", text[cut:], re.I):
        return text[:cut].strip()  # "I should graduate in April if …": the plan, not its proviso
    if not bounds:
        return ""
    return text[: bounds[-1]].strip()


_PREFERENCE = re.compile(
    r"\b(?:love|loves|loved|like|likes|enjoy|enjoys|hate|hates|prefer|prefers|favou?rite|"
    r"fan of|into|obsessed|can't stand|cannot stand|don't like|dislike|want|wants|wanna|"
    r"adore|addicted|enjoying|loving)\b",
    re.I,
)
_PLAN = re.compile(
    r"\b(?:going to|gonna|will|'ll|plan|planning|plans|about to|next (?:week|month|year|"
    r"semester|summer|fall|winter|spring|time)|tomorrow|tonight|later today|this weekend|"
    r"soon|leaving for|hoping to|intend|scheduled)\b",
    re.I,
)
_FACT = re.compile(
    r"^i(?:'m| am|m)\s+(?:a|an|from|in|at|on|the|majoring|studying|married|engaged|single|"
    r"\d+|\w+ years old|originally|currently)\b|\b(?:major|majoring|minor|minoring|study|"
    r"studying|work|works|working|job|live|lives|living|grew up|from|born|married|engaged|"
    r"have (?:a|an|one|two|three|four|\d+)|has (?:a|an|two|three|\d+)|own|owns|speak|speaks|"
    r"roommates?|brother|sister|mom|dad|mother|father|wife|husband|boyfriend|girlfriend|bf|gf|"
    r"son|daughter|family|parents|uncle|aunt|cousins?|grandma|grandpa|dog|cat|freshman|"
    r"sophomore|junior|senior|class|classes|year)\b",
    re.I,
)
_PAST = re.compile(
    r"\b(?:was|were|did|had|went|got|\w+ed|" + "|".join(sorted(IRREGULAR_PAST)) + r")\b",
    re.I,
)


_DOING_NOW = re.compile(r"^i(?:'m| am) (?:just|still|currently|now|right now) \w+ing\b", re.I)


def _kind(text: str, when: timeref.When | None) -> str:
    if _HOPE.match(text) or _EXPECT.match(text):
        return "plan"
    if _WANT.match(text):
        return "preference"
    first = re.match(r"^(?:i|my)\s+(\S+)", text, re.I)
    if _PLAN.search(text) and not (first and _PAST.fullmatch(first.group(1) or "")):
        return "plan"
    if when is not None and when.future:
        return "plan"
    past = bool(_PAST.search(text))
    if _PREFERENCE.search(text) and not past:
        return "preference"
    if when is not None or (past and not re.search(r"\b(?:was|were) (?:born|raised)\b", text)):
        return "event"
    if _DOING_NOW.match(text):  # "I'm just studying for a math test": happening, not a trait
        return "event"
    if _FACT.search(text):
        return "fact"
    if _PREFERENCE.search(text):
        return "preference"
    return "event"


def _entities(text: str, name: str) -> list[str]:
    """The speaker, and capitalised words past a sentence's first that are not "I"."""
    found = [name]
    for m in re.finditer(r"(?<=[a-z,] )([A-Z][a-zA-Z]+(?: [A-Z][a-zA-Z]+)*)", text):
        word = m.group(1)
        if word not in ("I", "I'm", "I've", "I'll") and word not in found:
            found.append(word)
    return found[:8]


class RuleObserver:
    """``Observer`` over the rules above."""

    name = NAME

    async def observe(self, turns: Sequence[Turn], namespace: str) -> list[Observation]:
        return observe(turns, namespace)
