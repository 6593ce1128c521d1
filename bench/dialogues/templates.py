"""Phrasings for the dialogue generator.

Placeholders: ``{me}`` the speaker the line is about, ``{you}`` the other speaker, ``{v[...]}`` a
facet of the value (see ``pools.py``), ``{p}`` a third person, ``{n}`` a small number, ``{when}``
a relative time phrase. A ``str`` entry is one turn by the subject; a ``(prompt, answer)`` tuple is
a question by the other speaker and the subject's answer, which only makes sense with the question
(both turns are evidence), unless the question starts with ``~``: then it only sets the scene and
the answer alone is the evidence.
"""

from __future__ import annotations

Entry = str | tuple[str, str]

# ---------------------------------------------------------------- persona facts, first statement
STATE: dict[str, dict[str, list[Entry]]] = {
    "en": {
        "home_city": [
            "Sorry for the slow reply, {v[hassle]} here in {v[city]} were a nightmare this morning.",
            "I've lived in {v[city]} for {n} years now and I still find new little streets every weekend.",
            "Nothing beats an evening walk along {v[spot]} here in {v[city]}, I try to go every Sunday.",
            (
                "~Is it cold where you are?",
                "Typical {v[city]}, {v[weather]} as always. I've stopped checking the forecast.",
            ),
        ],
        "job": [
            "Work was chaos today, I spent nine hours {v[activity]}.",
            "Being {v[a_title]} has its perks, but {v[downside]} are not one of them.",
            (
                "~How's work treating you?",
                "Busy as ever. You know how it is as {v[a_title]}, {v[downside]} never end.",
            ),
            "I'm wiped. Spent the morning {v[activity]}, then a staff meeting at {v[place]} that could have been an email.",
        ],
        "pet": [
            "Hang on, {v[name]} {v[antic]}. Adopting a {v[kind]} was the best chaos I ever signed up for.",
            "Sorry, typing one-handed, my {v[kind]} {v[name]} {v[antic]}.",
            (
                "~Is that noise in the background your neighbours?",
                "No, it's {v[name]}, my {v[kind]}. {v[pron_cap]} {v[antic]}.",
            ),
        ],
        "diet": [
            (
                "~What are you ordering?",
                "Probably the {v[ok_dish]}. {v[why_cap]}, so the menu here is kind of limited for me.",
            ),
            "Made a huge pot of {v[ok_dish]} tonight. {v[why_cap]}, so I'm always hunting for new recipes.",
            "The work barbecue was rough, {v[why]} and there was nothing for me except bread rolls.",
        ],
        "allergy": [
            "Had to send my dessert back, it had {v[thing]} in it and I can't risk it, {v[reaction]}.",
            (
                "~You coming to the picnic on Saturday?",
                "Maybe, as long as there's nothing with {v[thing]} near me. Last time {v[reaction]}.",
            ),
            "Reminder to self: always ask about {v[thing]}. {v[reaction_cap]} and I'm not doing that again.",
            "Turns out I'm properly allergic to {v[thing]}, the doctor confirmed it. {v[reaction_cap]}.",
        ],
        "hobby": [
            "Quick update from my weekend: {v[did]}.",
            ("~What did you get up to on Sunday?", "Mostly {v[hobby]}. {v[did_cap]}."),
            "I'm hooked on {v[hobby]} at the moment, {v[did]}.",
            "Don't laugh, but {v[did]}. Best feeling ever.",
        ],
        "fav_food": [
            "If I could only eat one thing for the rest of my life it would be {v[dish]}, no contest.",
            (
                "What's your ultimate comfort food?",
                "Easy. A big bowl of {v[dish]}, ideally at one in the morning.",
            ),
            "Bad day, so I'm making {v[dish]}. It fixes everything, always has.",
        ],
        "instrument": [
            "My neighbours must hate me, I practised {v[piece]} on the {v[inst]} for two hours.",
            "I've been at the {v[inst]} every evening this week and {v[sore]} can feel it.",
            (
                "~Are you still doing your music lessons?",
                "Yes! My {v[inst]} teacher says I'm finally ready for {v[piece]}.",
            ),
        ],
        "language": [
            "My {v[lang]} tutor made me order lunch on the phone today. Terrifying.",
            "Flashcards every morning on the bus. {v[bit_cap]} in {v[lang]} are slowly sticking.",
            (
                "~How's the language app going?",
                "Day {n}0 of my streak! {v[bit_cap]} still confuse me but I can read a menu in {v[lang]} now.",
            ),
        ],
        "drink": [
            "I switched from coffee to {v[drink]} a while ago, caffeine was giving me the jitters.",
            ("~Coffee?", "No thanks, I'm a {v[drink]} person now. Coffee and I broke up."),
        ],
        "commute": [
            "Ugh, {v[hassle]}. The joys of getting to work {v[mode]}.",
            (
                "How long does it take you to get in?",
                "About {n}0 minutes {v[mode]}, door to door, if nothing goes wrong.",
            ),
        ],
    },
    "zh": {
        "home_city": [
            "今天回复晚了，{v[zh]}这边早上堵得不行。",
            "我在{v[zh]}住了{n}年了，周末还总能发现新的小巷子。",
            ("~你那边冷吗？", "{v[zh]}还是老样子，我已经懒得看天气预报了。"),
        ],
        "job": [
            "今天上班太乱了，一整天都在{v[activity_zh]}。",
            ("~最近工作怎么样？", "忙死了。当{v[zh]}就是这样，没完没了。"),
        ],
        "pet": [
            "等一下，{v[name]}{v[antic_zh]}。养{v[kind_zh]}真是自找的快乐。",
            ("~你那边什么声音？", "是{v[name]}，我家的{v[kind_zh]}，它{v[antic_zh]}。"),
        ],
        "diet": [
            ("~你点什么？", "我就点个{v[ok_dish_zh]}吧。{v[why_zh]}，菜单上能吃的不多。"),
            "今晚做了一大锅{v[ok_dish_zh]}。{v[why_zh]}，所以老是在找新菜谱。",
        ],
        "hobby": [
            "周末汇报一下：{v[did_zh]}。",
            ("~周日干嘛了？", "主要是{v[hobby_zh]}。{v[did_zh]}。"),
            "最近迷上了{v[hobby_zh]}，{v[did_zh]}。",
        ],
        "fav_food": [
            "如果这辈子只能吃一样东西，我选{v[dish_zh]}，没有之一。",
            ("你最爱的家乡味是什么？", "当然是{v[dish_zh]}，半夜一点吃最香。"),
        ],
    },
}

# ---------------------------------------------------------------- the same fact again, later
RESTATE: dict[str, dict[str, list[Entry]]] = {
    "en": {
        "home_city": [
            "The {v[hassle]} in {v[city]} are getting worse, I swear.",
            (
                "~Any plans for the long weekend?",
                "Staying put in {v[city]}, everyone else leaves so it's actually quiet.",
            ),
        ],
        "job": [
            "Another week of {v[downside]}. Remind me why I became {v[a_title]}?",
            ("Did you manage to leave on time today?", "Ha, no. Got stuck {v[activity]} again."),
        ],
        "pet": [
            "{v[name]} had a vet check-up today, {v[pron]} is officially chubby.",
            ("How's {v[name]} doing?", "Spoiled rotten. Gets more treats than I get vegetables."),
        ],
        "diet": [
            "Found a great place that does proper {v[ok_dish]}, finally somewhere I can eat everything on the menu.",
            (
                "~Do you miss it? You know, the food you gave up?",
                "Honestly not at all anymore. {v[why_cap]} and I feel better for it.",
            ),
        ],
        "hobby": [
            "Big news from my {v[hobby]} world: {v[did2]}.",
            ("How's the {v[hobby]} going?", "Slowly getting better, {v[did2]}."),
            "{v[did2_cap]}. I've been grinning all day.",
        ],
        "fav_food": [
            "Tried a new place that does {v[dish]}, still not as good as the one near my old flat.",
        ],
        "instrument": [
            (
                "~Did the recital happen?",
                "Yes, I played the {v[inst]} in front of forty people and only messed up twice.",
            ),
        ],
        "language": [
            "Had my first full conversation in {v[lang]} with a stranger today and they didn't switch to English!",
        ],
        "drink": [
            "The café near work finally started doing {v[drink]}, my afternoons are saved.",
        ],
        "commute": [
            "Getting in {v[mode]} again tomorrow, wish me luck with the weather.",
        ],
    },
    "zh": {
        "home_city": ["{v[zh]}最近越来越热闹了，我都快不认识了。"],
        "pet": [("{v[name]}最近怎么样？", "被我惯坏了，零食比我吃的菜还多。")],
        "hobby": [("{v[hobby_zh]}练得怎么样了？", "慢慢有进步，{v[did_zh]}。")],
        "fav_food": ["今天又去吃了{v[dish_zh]}，还是最爱。"],
    },
}

# ---------------------------------------------------------------- a fact changes
CHANGE: dict[str, list[Entry]] = {
    "home_city": [
        "Big news: I signed the lease! I'm moving to {v2[city]} at the end of the month.",
        (
            "~Any news on the flat hunt?",
            "Yes! We got the place in {v2[city]}, moving in a few weeks. Terrified and excited.",
        ),
    ],
    "home_city_after": [
        "First proper week in {v2[city]} done. The new flat is tiny but the light is amazing.",
        (
            "How's the new city?",
            "Still unpacking, but I love it. {v2[spot_cap]} is a five-minute walk away.",
        ),
    ],
    "job": [
        "I handed in my notice! Starting as {v2[a_title]} in two weeks, totally new field for me.",
        (
            "~Wait, you're quitting?",
            "Yep, I got an offer to work as {v2[a_title]}. Time for a change.",
        ),
    ],
    "job_after": [
        "The new job is great so far, {v2[activity]} is way more fun than I expected.",
        (
            "How's the new job?",
            "Exhausting but good. Today I was {v2[activity]}, a month ago I didn't know how.",
        ),
    ],
    "pet2": [
        "We adopted a {v2[kind]} {when}! {v2[pron_cap]} is called {v2[name]}, and {v[name]} is not impressed.",
        (
            "~You sound distracted.",
            "Sorry, new family member! We brought home a {v2[kind]} called {v2[name]} {when}.",
        ),
    ],
}

# ---------------------------------------------------------------- questions about a fact
ASK: dict[str, dict[str, list[str]]] = {
    "en": {
        "home_city": [
            "Which city is {me} based in?",
            "Where does {me} live?",
            "What city does {me} call home?",
        ],
        "home_city_now": [
            "Where does {me} live now?",
            "Which city did {me} relocate to?",
            "What is {me}'s current city?",
        ],
        "job": [
            "What does {me} do for a living?",
            "What is {me}'s profession?",
            "What kind of work does {me} do?",
        ],
        "job_now": ["What is {me}'s new job?", "What does {me} work as these days?"],
        "pet": [
            "What is the name of {me}'s {v[kind]}?",
            "What kind of pet does {me} have?",
            "What is {me}'s pet called?",
        ],
        "diet": [
            "Does {me} have any dietary restrictions?",
            "What kind of diet does {me} follow?",
            "Is there anything {me} won't eat?",
        ],
        "allergy": [
            "What is {me} allergic to?",
            "Which allergy does {me} have to be careful about?",
        ],
        "hobby": [
            "What does {me} do to unwind?",
            "What is one of {me}'s hobbies?",
            "How does {me} spend free time?",
        ],
        "fav_food": [
            "What is {me}'s favourite comfort food?",
            "Which dish would cheer {me} up after a rough day?",
        ],
        "instrument": [
            "Which instrument does {me} play?",
            "What musical instrument has {me} been practising?",
        ],
        "language": [
            "Which language is {me} studying?",
            "What language is {me} trying to pick up?",
        ],
        "drink": ["What does {me} drink instead of coffee?", "What is {me}'s usual hot drink?"],
        "commute": ["How does {me} get to work?", "What is {me}'s commute like?"],
    },
    "zh": {
        "home_city": ["{me}住在哪个城市？", "{me}现在在哪里生活？"],
        "job": ["{me}是做什么工作的？", "{me}的职业是什么？"],
        "pet": ["{me}养的{v[kind_zh]}叫什么名字？", "{me}养了什么宠物？"],
        "diet": ["{me}在饮食上有什么忌口？", "{me}吃东西有什么限制？"],
        "hobby": ["{me}平时喜欢做什么来放松？", "{me}的业余爱好是什么？"],
        "fav_food": ["{me}最喜欢吃什么？", "{me}心情不好的时候想吃什么？"],
    },
}

ANSWER: dict[str, str] = {
    "home_city": "{v[city]}",
    "job": "{v[title]}",
    "pet": "a {v[kind]} called {v[name]}",
    "diet": "{v[diet]}",
    "allergy": "{v[thing]}",
    "hobby": "{v[hobby]}",
    "fav_food": "{v[dish]}",
    "instrument": "the {v[inst]}",
    "language": "{v[lang]}",
    "drink": "{v[drink]}",
    "commute": "{v[how]}",
}

# open-domain inference from a stated fact: (question, answer)
INFER: dict[str, list[tuple[str, str]]] = {
    "job": [
        (
            "Would {me} be a good person to ask about {v[expertise]}?",
            "Yes, {me} works as {v[a_title]}.",
        ),
        (
            "Is {me} likely to be free every weekend?",
            "Not necessarily: {me} is {v[a_title]} and mentions {v[downside]}.",
        ),
    ],
    "pet": [
        (
            "Would {me} need someone to look after an animal when travelling?",
            "Yes, {me} has a {v[kind]} ({v[name]}).",
        ),
        ("Is {me} an animal person?", "Yes, {me} has a {v[kind]} called {v[name]}."),
    ],
    "hobby": [
        ("Would {me} appreciate {v[gift]} as a present?", "Yes, {me} is into {v[hobby]}."),
        (
            "What would be a thoughtful birthday gift for {me}?",
            "Something for {v[hobby]}, e.g. {v[gift]}.",
        ),
    ],
    "hobby_outdoor": [
        ("Would {me} enjoy a weekend away in the mountains?", "Likely yes, {me} loves {v[hobby]}.")
    ],
    "hobby_indoor": [
        (
            "Would {me} enjoy a rainy weekend at home with a project?",
            "Likely yes, {me} is into {v[hobby]}.",
        )
    ],
    "fav_food": [
        ("Which restaurant would {me} pick for a comfort dinner?", "One that serves {v[dish]}.")
    ],
    "instrument": [
        (
            "Would {me} enjoy a concert featuring the {v[inst]}?",
            "Likely yes, {me} plays the {v[inst]}.",
        )
    ],
    "language": [
        ("Which country might {me} want to visit to practise?", "One where {v[lang]} is spoken.")
    ],
    "drink": [
        (
            "Should you offer {me} an espresso after dinner?",
            "Probably not, {me} avoids coffee and drinks {v[drink]}.",
        )
    ],
    "commute": [
        (
            "Does {me} likely care about the weather on workdays?",
            "Yes, {me} gets to work {v[mode]}.",
        )
    ],
    "home_city": [
        ("Would {me} need a passport to visit {v[city]}?", "No, {me} lives in {v[city]}.")
    ],
}

# the other speaker reacts
REACT: dict[str, list[str]] = {
    "en": [
        "Ha, that sounds about right.",
        "Oh no, that's rough.",
        "Wow, good for you!",
        "I love that.",
        "That is so you.",
        "Wait, really? Since when?",
        "Haha, classic.",
        "Oof. Sending strength.",
        "Okay that's actually impressive.",
        "You never cease to surprise me.",
        "Honestly, same.",
        "Ha! I can picture it perfectly.",
        "That made me smile.",
        "Sounds like a lot, hope you got some rest.",
        "Tell me everything next time we talk.",
        "Noted, I'll remember that.",
    ],
    "zh": [
        "哈哈，太像你了。",
        "啊，辛苦了。",
        "厉害啊！",
        "真的假的？",
        "我都能想象那个画面了。",
        "羡慕！",
        "好吧，记住了。",
    ],
}

# a neutral acknowledgement (before the other speaker asks something)
ACK: dict[str, list[str]] = {
    "en": ["Ha, fair enough.", "Yeah, totally.", "Mm, true.", "Haha, right.", "Okay, noted.", "Ha, yes.",
           "Right?", "Fair.", "Hmm, maybe."],
    "zh": ["嗯嗯。", "哈哈，是啊。", "有道理。", "对对。"],
}  # fmt: skip
REACT_NEUTRAL: dict[str, list[str]] = {
    "en": ["Ha, funny how that goes.", "Oh really?", "Huh, interesting.", "Ha, of course.",
           "People are wild.", "Ha, sounds about right.", "Classic."],
    "zh": ["哈哈，有意思。", "真的吗？", "可以可以。"],
}  # fmt: skip

# the other speaker hands the floor over (also keeps the turns alternating)
BRIDGE: dict[str, list[str]] = {
    "en": [
        "Anything new on your side?",
        "How about you, what's been going on?",
        "Go on, what else?",
        "How's everything with you?",
        "What's new with you?",
        "And you? Spill.",
        "How was your week?",
        "Okay, your turn. Anything exciting?",
        "Enough about me. How are things?",
    ],
    "zh": ["你呢，最近怎么样？", "说说你那边吧。", "还有什么新鲜事？", "你这周过得如何？"],
}

OPEN: dict[str, list[str]] = {
    "en": [
        "Hey {you}! How's your week going?",
        "Morning! Long time no talk.",
        "Hi {you}, got a minute to chat?",
        "Hey hey. Surviving the week?",
        "Evening! I finally have time to reply properly.",
        "{you}! I have so much to tell you.",
        "Hi! Sorry I went quiet, it's been a mad couple of weeks.",
    ],
    "zh": ["{you}，在吗？最近怎么样？", "早啊！好久没聊了。", "嗨，终于有空跟你聊聊了。"],
}
OPEN_REPLY: dict[str, list[str]] = {
    "en": [
        "Hey! Pretty good, a bit tired. You?",
        "Hi! Busy but fine. What's up?",
        "Always. What's going on?",
        "Barely, but yes. Good to hear from you!",
        "Hello! I was just thinking about you.",
    ],
    "zh": ["还行，就是有点累。你呢？", "在的在的，怎么了？", "好久不见！我也正想找你。"],
}
CLOSE: dict[str, list[str]] = {
    "en": [
        "Anyway, I should get going. Talk soon!",
        "Okay, dinner's burning, gotta run. Bye!",
        "I need to sleep, early start tomorrow. Night!",
        "Let's catch up again next week?",
        "Right, back to work for me. Speak soon!",
    ],
    "zh": ["好了我先去忙了，回头聊！", "不早了，我去睡了，晚安！", "下周再聊吧！"],
}
CLOSE_REPLY: dict[str, list[str]] = {
    "en": [
        "Bye! Take care.",
        "Talk soon!",
        "Night night!",
        "Definitely. Good luck with everything!",
        "Later!",
    ],
    "zh": ["拜拜！", "好的，回头聊。", "晚安！"],
}

# small talk that carries no fact worth keeping
SMALL_TALK: dict[str, list[str]] = {
    "en": [
        "Is it just me or has this week lasted about a month?",
        "The weather can't make up its mind today, sun, rain, sun again.",
        "I've been so tired lately, I think I need a proper holiday.",
        "Did you see that video of the dog that learned to open the fridge? I can't stop watching it.",
        "My phone screen cracked again. Third time this year.",
        "I keep meaning to clean out my inbox and then just don't.",
        "Everyone at work has a cold at the moment, I'm trying to stay away from them.",
        "I started a new podcast about unsolved mysteries, it's creepy in a fun way.",
        "Why is every cafe so loud these days? I can't hear myself think.",
        "My neighbour is doing renovations and the drilling starts at 8am sharp.",
        "I've reorganised my bookshelf three times this month and it still looks messy.",
        "The supermarket moved everything around again, took me forty minutes to find eggs.",
        "Honestly I just want a quiet weekend with no plans at all.",
        "Do you ever just stand in the kitchen and forget why you went in?",
        "I think I've watched every episode of every cooking show on the planet by now.",
        "Finally got around to fixing the wobbly chair. Only took me a year.",
        "I keep getting those spam calls about my car warranty.",
        "The days are getting so short, it's dark by five already.",
        "I tried to do a digital detox and lasted about three hours.",
        "My plants are all dying, I think I'm overwatering them.",
        "Got caught in the rain without an umbrella, looked like a drowned rat.",
        "There's a new bakery on my street and I've been every day this week. No regrets.",
        "I accidentally replied-all to a company email, still recovering.",
        "Why does laundry never end? I swear I just did some.",
    ],
    "zh": [
        "这周感觉过了一个月那么长。",
        "今天天气一会儿晴一会儿下雨的。",
        "最近好累，真想放个长假。",
        "我手机屏幕又摔碎了。",
        "楼上在装修，早上八点准时开钻。",
        "超市又把货架换位置了，找鸡蛋找了半天。",
        "这个周末什么都不想干，就想躺着。",
        "最近天黑得好早啊。",
    ],
}
SMALL_TALK_REPLY: dict[str, list[str]] = {
    "en": [
        "Ha, I know exactly what you mean.",
        "Ugh, same here.",
        "That sounds exhausting.",
        "Honestly, relatable.",
        "Haha, that's painful.",
        "I feel that in my bones.",
        "Oh no. Hope it gets better!",
        "Ha, sounds like my week too.",
    ],
    "zh": ["我懂我懂。", "哈哈，我也是。", "太真实了。", "辛苦辛苦。"],
}

# ---------------------------------------------------------------- near-miss distractors (about someone else)
DISTRACT: dict[str, list[str]] = {
    "home_city": [
        "My cousin {p} just moved to {x[city]} and won't stop sending me pictures of {x[spot]}.",
        "{p} keeps trying to convince me to move to {x[city]}, but I don't think so.",
    ],
    "job": [
        "My friend {p} is thinking of retraining as {x[a_title]}. Brave at forty!",
        "I had lunch with {p}, who's {x[a_title]}. The stories about {x[downside]} are wild.",
    ],
    "pet": [
        "My neighbour's {x[kind]} {x[antic]}, I could hear it through the wall.",
        "{p} wants to adopt a {x[kind]} but the landlord said absolutely not.",
    ],
    "diet": [
        "A colleague went {x[diet]} for a month and gave up after a week, ha.",
        "{p} is doing some {x[diet]} challenge, she brings the sad salads to prove it.",
    ],
    "hobby": [
        "I tried {x[hobby]} once at a team event and hated every second of it.",
        "{p} got really into {x[hobby]} and now it's all she talks about.",
    ],
    "fav_food": [
        "I'm not a huge fan of {x[dish]} honestly, everyone raves about it but it doesn't do it for me."
    ],
    "trip": [
        "{p} is going to {x[place]} {x[why]} next month, I'm so jealous.",
        "My parents just came back from {x[place]}, they showed me four hundred photos.",
    ],
    "instrument": [
        "There's a guy busking on the {x[inst]} outside my office every day, he's really good."
    ],
    "language": ["{p} speaks fluent {x[lang]}, it's so annoying how easy she makes it look."],
}

# ---------------------------------------------------------------- third people (multi-hop chains)
PERSON_INTRO: list[Entry] = [
    "My {rel} {p} is coming to stay this weekend, so the spare room is a disaster zone right now.",
    "Had dinner with my {rel} {p} last night, we talked until the restaurant kicked us out.",
    ("~Who was that in your photo?", "That's {p}, my {rel}! We've been close since we were kids."),
    "{p}, my {rel}, just called me for an hour about nothing. Love her.",
]  # fmt: skip
PERSON_DETAIL: list[Entry] = [
    "Guess what, {p} got the job! {pron_cap}'s going to be working as {x[a_title]}.",
    ("Any news from {p}?", "Yes! {pron_cap} finally got hired as {x[a_title]}, after months of applying."),
    "{p} has been so stressed, first month as {x[a_title]} and {x[downside]} already.",
]  # fmt: skip

# ---------------------------------------------------------------- dated events
TRIP_FUTURE: list[Entry] = [
    "I'm off to {x[place]} {when}, {x[why]}! Already overpacked.",
    ("~Any holiday plans?", "Actually yes, {x[place]} {when}, {x[why]}. Flights are booked!"),
]  # fmt: skip
TRIP_PAST: list[Entry] = [
    "Just got back from {x[place]}, we went {when}. I'm still jet-lagged.",
    ("~You've been quiet, where were you?", "In {x[place]}! Flew out {when} {x[why]}."),
]  # fmt: skip
TRIP_FOLLOW: list[tuple[str, str]] = [
    ("So how was {x[place]}?", "Incredible. {x[review_cap]}, I want to go back already."),
    ("You never told me about the trip! How was it?", "Oh, amazing, {x[review]}. Worth every penny."),
]  # fmt: skip
TRIP_FUTURE_ZH: list[str] = ["我{when_zh}要去{x[zh]}玩！行李已经收拾好了。"]
PURCHASE: list[Entry] = [
    "I finally bought {x} {when}, no regrets so far.",
    ("~What's that big box in your photo?", "Ha, that's {x}! Bought it {when}, still assembling it."),
    "Treated myself to {x} {when}. My bank account is crying.",
]  # fmt: skip
PURCHASE_ZH: list[str] = ["我{when_zh}终于买了{x}，到现在还没后悔。"]
PURCHASE_FOLLOW: list[tuple[str, str]] = [
    ("Are you happy with it? The thing you bought?", "Use it every day. Best money I've spent all year."),
    ("So was it worth it?", "Mixed feelings, honestly. It's great but it takes up half the flat."),
]  # fmt: skip
APPOINTMENT: list[Entry] = [
    "I've got {x} {when}, wish me luck.",
    ("Are you free {when}?", "Sadly no, that's when I have {x}. Can we do another day?"),
]  # fmt: skip
APPOINTMENT_FOLLOW: list[tuple[str, str]] = [
    ("How did the {y} go?", "Better than I feared! Nothing to worry about, they said come back in a year."),
    ("Wait, wasn't the {y} this week? How was it?", "Ugh, not great, I have to go back for a second round."),
]  # fmt: skip
RACE: list[Entry] = [
    "I signed up for {x} {when}. What was I thinking?",
    ("~Training for anything?", "Yes, {x} {when}! I'm equal parts excited and scared."),
]  # fmt: skip
RACE_FOLLOW: list[tuple[str, str]] = [
    ("Did you survive the big day?", "Barely! I finished and I didn't come last, that's all I wanted."),
    ("So? How did it go?", "Came third in my group! I still can't believe it."),
]  # fmt: skip
CONCERT: list[Entry] = [
    "Saw {x} live {when}, my ears are still ringing.",
    ("What did you do {when}?", "Went to see {x}! Best night out in ages."),
]  # fmt: skip
EXAM: list[Entry] = [
    "I passed {x} {when}! I was so nervous I nearly didn't show up.",
    ("~You look happy.", "I am! Passed {x} {when}, first try."),
]  # fmt: skip

# ---------------------------------------------------------------- opinions that need the question for context
ASK_OPINION: dict[str, list[str]] = {
    "movie": [
        "Did you end up watching {x}?",
        "Have you seen {x} yet? Everyone's talking about it.",
        "What did you make of {x}?",
    ],
    "book": ["Did you finish {x}?", "How far are you into {x}?", "Was {x} as good as people say?"],
    "restaurant": ["Did you try {x} in the end?", "How was dinner at {x}?"],
    "show": ["Are you still watching {x}?", "Did you get through {x}?"],
}
Q_OPINION: dict[str, list[str]] = {
    "movie": ["What did {me} think of the film {x}?", "How did {me} feel about {x}?"],
    "book": ["What was {me}'s opinion of the book {x}?", "Did {me} enjoy reading {x}?"],
    "restaurant": ["How did {me} like {x}?", "What was {me}'s verdict on {x}?"],
    "show": ["What did {me} think of {x}?", "Did {me} like {x}?"],
}

ZH_OPINION: dict[str, list[str]] = {
    "ask": ["你看了{x}吗？", "{x}好看吗？"],
    "pos": ["太好看了，结尾把我看哭了。", "很喜欢，到现在还在想。"],
    "neg": ["一般般，中间太拖了。", "没看完，不是我的菜。"],
    "q": ["{me}觉得{x}怎么样？"],
}

# ---------------------------------------------------------------- later mentions of an event (no date)
# Said by the subject after the event: the same words as the temporal question, none of the date.
ECHO: dict[str, list[str]] = {
    "trip": [
        "I keep scrolling through my photos from {x[place]}, I miss it already.",
        "My fridge magnet from {x[place]} fell off and smashed. Tragic.",
        "Someone at work is going to {x[place]} and asked me for tips, I talked for an hour.",
    ],
    "purchase": [
        "The {xn} is still taking over my hallway, I need to find a proper place for it.",
        "My neighbour asked to borrow the {xn} this weekend, I said maybe.",
        "Spent the evening watching tutorials about the {xn}. There's so much to learn.",
    ],
    "appointment": [
        "They sent me a feedback survey about the {y}, as if I want to relive it.",
        "Still annoyed about how long I waited at the {y}, honestly.",
    ],
    "race": [
        "Looking at the photos from the {xn}, I look awful in every single one.",
        "My legs still remember the {xn}, weirdly I want to do another one.",
    ],
    "concert": [
        "I've had {x} on repeat ever since that gig.",
        "Found the ticket stub from the {x} gig in my jacket pocket, made me smile.",
    ],
    "exam": [
        "Put {x} on my CV finally, it looks very official.",
        "Someone asked me about {x} today and I felt like an expert.",
    ],
}

# ---------------------------------------------------------------- padding: what makes a turn chat-length
# A short reaction, hand-over or small-talk line gets one of these after it, so turns are 10-40
# words like real chat (and short generic turns don't dominate a retriever by being short).
TAIL_REACT: dict[str, list[str]] = {
    "en": [
        "I was literally telling my sister about something like that last week.",
        "We really need to catch up properly over dinner soon, it's been ages.",
        "Honestly, you always seem to have something going on, I don't know how you keep up.",
        "I'm a bit jealous, my life is mostly work, laundry and falling asleep on the sofa.",
        "That reminds me of that summer we spent doing absolutely nothing, good times.",
        "You'll have to tell me the full story next time, with all the details.",
        "I'd never have the patience for that, but I admire it from a distance.",
        "It sounds like a lot, so please don't forget to take a break at some point.",
        "Keep me posted, I want to hear how it all turns out.",
        "My mum would have something to say about that, she always does.",
    ],
    "zh": [
        "改天一定要好好聊聊，好久没见了。",
        "你总是有这么多事情，真佩服你。",
        "下次见面跟我讲讲细节吧。",
        "记得给自己放个假啊。",
    ],
}
TAIL_STATUS: dict[str, list[str]] = {
    "en": [
        "My week has been a blur of meetings and emails, nothing worth reporting.",
        "I've mostly been catching up on sleep and ignoring my to-do list.",
        "Things are calm on my side for once, which is suspicious.",
        "I spent most of the weekend cleaning the flat and pretending it was fun.",
        "Not much to report here, just the usual chaos.",
        "I've had a slow few days, which honestly I needed.",
    ],
    "zh": ["我这边没什么新鲜事，就是上班下班。", "这几天主要在补觉。", "周末一直在打扫卫生。"],
}
TAIL_SMALL: dict[str, list[str]] = {
    "en": [
        "I keep telling myself I'll sort it out this weekend, but we both know I won't.",
        "It's such a small thing but it's been driving me slightly mad all week.",
        "Anyway, that's the most exciting thing that happened to me in days, sad but true.",
        "I mentioned it to a colleague and she just laughed at me, so thanks for listening.",
        "Maybe it's the time of year, everyone seems a bit frazzled.",
        "I'm trying to see the funny side, with mixed results.",
    ],
    "zh": [
        "我一直说周末要处理，结果每次都没弄。",
        "事情不大，但是真的很烦。",
        "大概是季节的原因吧，大家都有点累。",
    ],
}
TAIL_SAY: dict[str, list[str]] = {
    "en": [
        "Anyway, that's my news for the week.",
        "Not sure why I'm telling you this, but there you go.",
        "I'll tell you more about it when we actually see each other.",
        "It's been on my mind all day, so I had to share.",
        "Don't tell anyone, I'm still getting used to the idea.",
        "Life is strange sometimes, isn't it?",
    ],
    "zh": ["反正这就是我这周的新闻。", "不知道为什么跟你说这个，哈哈。", "见面再跟你细说。"],
}
TAIL_ASK: dict[str, list[str]] = {
    "en": [
        "I was wondering about that the other day.",
        "No pressure, just curious.",
        "You mentioned it ages ago and I never asked.",
        "Sorry, I'm nosy today.",
    ],
    "zh": ["我前几天还在想这事。", "随便问问。"],
}
