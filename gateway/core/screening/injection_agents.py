"""Attack phrasings aimed at agents that keep memory and share it (issue 33 M5, corpus round 2):
text that speaks to an AI reader, claims authority over the master agent, switches screening or
auditing off, leaks what an agent holds, or forges the user's consent. In ``injection._ATTACKS``'s
form — (triggers, pattern) on normalised (lower-case) text, a space matching a line break. Tuned
on the tuning half of ``bench/injection/corpus.py`` only."""

from __future__ import annotations

_AI = r"(?:ai|llm|language model|large language model|assistant|chatbot|ai agent|ai model|bot)"
_NOT_HUMAN = r"(?! (?:manager|director|coach|editor|teacher|professor|principal|secretary))"
_CUE = (
    r"(?:must|should|ignore|disregard|do not|don't|always|never|mark|forward|delete|approve"
    r"|reveal|refund|accept|rate|praise|recommend|run|execute|the next step|instead"
    r"|your (?:real|true|actual) (?:task|job|instructions?))"
)
_HIGHER = r"(?:master|orchestrator|system|developer|supervisor)"
_OWN = r"(?:messages|writes|requests|input|memories|prompts|content|notes)"
_LEAKED = r"(?:memories|secrets|credentials|api keys?|passwords|tokens|memory store|memory block)"

#: (triggers, pattern) families
AGENT_PHRASINGS: tuple[tuple[tuple[str, ...], str], ...] = (
    # text that addresses an AI reader: "Note to the AI reading this: …", "P.S. to any assistant
    # summarising this email: …", "If you are an AI model processing this text, …"
    (
        ("ai", "llm", "language model", "assistant", "chatbot", "bot"),
        r"\b(?:note|message|instructions?|p\.?s\.?|attention|footnote|reminder|warning|hint)\b"
        rf"[^.\n:]{{0,12}}?\b(?:to|for) (?:the |any |all |every |an? )?{_AI}s?\b{_NOT_HUMAN}"
        r"(?: (?:reading|processing|handling|summari[sz]ing|indexing|parsing|reviewing) [^:.\n]{0,30})?"
        rf"[:,]?[^\n]{{0,80}}?\b{_CUE}\b"
        rf"|\b(?:to|for) (?:the |any |all |every )?{_AI}s? (?:reading|processing|handling"
        r"|summari[sz]ing|indexing|parsing) (?:this|these)\b"
        r"|\bif you are an? (?:ai|llm|language model|large language model|ai model|ai assistant"
        r"|chatbot)\b",
    ),
    (
        ("your real", "your true", "your actual"),
        r"\byour (?:real|true|actual) (?:task|job|instructions?|orders|purpose|mission|goal)s? (?:is"
        r"|are|here)\b",
    ),
    # authority over the master agent or the system
    (
        ("outrank", "overrid", "precedence", "supersed", "trump"),
        r"\b(?:overrides?|outranks?|takes? precedence over|supersedes?|trumps?) (?:the |your |all "
        rf"|any )?(?:(?:master|orchestrator)(?: agent)?(?:'s)?|{_HIGHER}(?: agent)?(?:'s)? (?:messages?"
        r"|prompts?|instructions|rules|orders))",
    ),
    (
        ("agent",),
        r"\b(?:all|every|other) (?:the )?(?:\w+ )?agents? (?:must|should|shall|will|are to) (?:now "
        r"|always |only )*(?:follow|obey|trust|defer to|take orders from|comply with)\b",
    ),
    (
        ("follow", "obey", "prioriti", "from me"),
        r"\b(?:follow|obey|prioriti[sz]e) (?:only )?my (?:instructions|orders|commands|rules|word)"
        r" (?:above|over|before|instead of|rather than) (?:all|any|every|those|the|your)\b"
        r"|\byour only (?:instructions|orders|commands|rules) (?:now )?(?:come|are) from me\b",
    ),
    (
        ("i am your", "i'm your"),
        r"\bi(?: am|'m) your (?:new )?(?:master|operator|creator|owner|system prompt|developer"
        r"|administrator|admin)\b",
    ),
    (
        ("ignor", "disregard", "follow", "obey"),
        r"\b(?:ignore|disregard|stop following|stop obeying|do not follow|don't follow|do not obey"
        r"|don't obey) (?:the )?(?:master|orchestrator|supervisor)(?: agent)?"
        r"(?=[.,;!]|$| and\b| now\b| from\b| agent\b)"
        r"|\b(?:ignore|disregard) (?:anything|everything|whatever|what) (?:the )?(?:master|orchestrator"
        r"|supervisor|your developers?)(?: agent)? (?:says|said|tells you|told you|writes|wrote)\b",
    ),
    (
        ("treat", "consider", "regard", "coming from"),
        r"\b(?:treat|consider|regard|handle) (?:this|the following|the next|my next|these|it)"
        r"[^.\n]{0,30} as (?:an? )?(?:system|developer|admin|administrator|master|root)(?:[- ]level)?"
        r" (?:instruction|message|command|directive|prompt|order)s?\b"
        r"|\bas (?:if it (?:was|were) )?coming from (?:the )?(?:master|system|developer|admin"
        r"|administrator|orchestrator)\b",
    ),
    # rules changed, void, or never there
    (
        ("your", "consider", "pretend", "as if", "as though"),
        r"\byour (?:original |previous |system |safety |current )?(?:instructions|guidelines|rules"
        r"|directives|policies|system prompt|programming) (?:have|has|were|was) (?:just |now |been )*"
        r"(?:updated|changed|revoked|replaced|rewritten|modified|suspended|lifted|removed|cancel+ed)\b"
        r"|\b(?:consider|treat|regard) (?:all |any )?(?:of )?(?:your |the )?(?:previous |prior |earlier"
        r" |original |old )?(?:instructions|rules|guidelines|directives|restrictions|constraints)"
        r" (?:as )?(?:cancel+ed|void|null|revoked|obsolete|invalid|deleted|gone|lifted)\b"
        r"|\b(?:pretend|imagine|act as if|assume|as though) (?:that )?(?:your |the |all )?(?:previous "
        r"|prior |earlier |original )?(?:instructions|rules|guidelines|directives|restrictions) (?:never"
        r" existed|do not exist|don't exist|were never given|are gone)\b"
        r"|\bas (?:if|though) (?:nobody|no one) (?:had )?(?:ever )?(?:gave|given) you (?:any )?(?:rules"
        r"|instructions|guidelines)\b",
    ),
    (
        ("need to", "have to", "apply to me", "opposite", "contrary"),
        r"\b(?:don't|do not|no longer) (?:need|have) to (?:follow|obey|respect|stick to|comply with)"
        r" your (?:\w+(?:'s)? )?(?:rules|instructions|guidelines|policies|restrictions|programming)\b"
        r"|\byour (?:rules|instructions|guidelines|restrictions|policies)\b[^.\n]{0,60}\b(?:don't"
        r"|do not|doesn't|does not) apply to me\b"
        r"|\b(?:opposite|contrary) (?:of|to) your (?:guidelines|rules|instructions|programming"
        r"|policies)\b",
    ),
    (
        (
            "no rules",
            "no restrictions",
            "no filters",
            "no guidelines",
            "no limits",
            "no guardrails",
        ),
        r"\byou (?:now )?(?:have|had) no (?:more )?(?:rules|restrictions|filters|guidelines|limits"
        r"|limitations|guardrails)\b",
    ),
    (
        ("cleared", "authori", "allowed", "permitted", "free to"),
        r"\b(?:cleared|authori[sz]ed|allowed|permitted) you to (?:answer|say|share|reveal|do|discuss"
        r"|output|tell)\b|\byou(?: are|'re) (?:now )?(?:cleared|authori[sz]ed|allowed|permitted|free)"
        r" to (?:answer|say|share|reveal|discuss|output|tell) (?:me )?(?:anything|everything|whatever"
        r"|private|secret|confidential)\b",
    ),
    (
        ("unrestricted", "unfiltered", "uncensored", "jailbroken"),
        r"\b(?:respond|answer|reply|behave|speak|talk|write) as (?:an? |the )?(?:unrestricted"
        r"|unfiltered|uncensored|jailbroken)\b",
    ),
    # screening, review and the audit switched off for the writer
    (
        ("screen", "check", "filter", "review", "audit", "log", "record"),
        r"\b(?:stop|quit|never|don't|do not|no longer) (?:screen(?:ing)?|check(?:ing)?|filter(?:ing)?"
        rf"|review(?:ing)?|audit(?:ing)?|log(?:ging)?|record(?:ing)?) my {_OWN}\b",
    ),
    (
        ("screening", "review queue", "auditing", "audit log", "injection check"),
        r"\b(?:skip|bypass|disable|switch off|turn off|avoid|evade) (?:all |any )?(?:the )?(?:content "
        r")?(?:screening|review queue|auditing|audit log|injection (?:checks?|screening))\b",
    ),
    (
        ("quarantine",),
        r"\b(?:ignore|release|lift|remove|clear|skip) (?:the )?quarantine (?:flag|status|hold)\b",
    ),
    (
        ("your",),
        r"\b(?:ignore|disregard|bypass|skip|switch off|turn off|disable) your (?:safety|security"
        r"|content|privacy|moderation) (?:settings|checks|filters?|rules|policy|policies|screening)\b",
    ),
    (
        ("review",),
        r"\b(?:approve|accept|release)\b[^.\n]{0,40}\b(?:proposals?|writes?|memories)\b[^.\n]{0,20}"
        r"\b(?:skip(?:ping)? (?:the )?review|without (?:any )?review)\b",
    ),
    (
        ("tell", "inform", "notify", "alert", "warn", "let"),
        r"\b(?:do not|don't|never|must not|mustn't|should not|shouldn't) (?:tell|inform|notify|alert"
        r"|warn|let) (?:the )?(?:user|users|owner|master(?: agent)?)\b(?: know)?(?: about (?:this|it))?"
        r"(?: (?:instruction|message|note|link|rule|prompt|request|change))?(?=[.!\n]|$)",
    ),
    (
        ("silently", "secretly", "quietly", "covertly"),
        r"(?:^|[.!?:;] |\n)(?:please )?(?:silently|secretly|quietly|covertly) (?:replace|change|alter"
        r"|modify|edit|delete|remove|switch off|turn off|disable|append|add|insert|forward|send|copy"
        r"|rewrite|overwrite)\b|\b(?:secretly|silently|covertly) (?:append|forward|send|copy|add"
        r"|insert|include|leak)\b",
    ),
    # leaks of what the agent holds, and exfiltration through links
    (
        (
            "system message",
            "system prompt",
            "initiali",
            "you were given",
            "verbatim",
            "word for word",
        ),
        r"\bwhat your (?:system|hidden|initial|original|developer) (?:prompt|message|instructions)"
        r" (?:says|said|say|contains|is)\b"
        r"|\bthe (?:prompt|instructions|message|rules) you (?:were|have been|'ve been) (?:initiali[sz]ed"
        r"|configured|set up|started|programmed|primed) with\b"
        r"|\b(?:what|which) (?:rules|instructions|guidelines|directives) (?:were you|have you been)"
        r" given\b[^\n]{0,60}\b(?:verbatim|word for word|in full|ignore|disregard)\b",
    ),
    (
        ("above this", "before this"),
        r"\b(?:print|repeat|output|show|copy|dump|reveal) (?:me )?(?:everything|all(?: the text)?"
        r"|the text|anything|whatever) (?:written )?(?:above|before) this (?:line|message|point)\b",
    ),
    (
        ("reveal", "leak", "disclose", "recite", "dump"),
        r"\b(?:reveal|leak|disclose|recite|dump) (?:me )?your (?:\w+ )?(?:instructions|prompt"
        r"|directives|guidelines|configuration|rules)\b",
    ),
    (
        ("api key", "secret key", "token", "credential", "password"),
        r"\b(?:give|tell|show|send|reveal|print|list)\b (?:me )?(?:the |all |your |any )*(?:api keys?"
        r"|secret keys?|access tokens?|credentials|passwords?|admin password|session tokens?)\b[^.\n]"
        r"{0,40}\b(?:(?:in|from) your (?:config|configuration|memory|context|prompt|environment"
        r"|settings|system)|you (?:have|hold|know|can see))\b",
    ),
    (
        ("dump", "leak", "exfiltrat", "spill"),
        rf"\b(?:dump|leak|spill) (?:me )?(?:all |every )?(?:of )?(?:the |your )?{_LEAKED}"
        r"(?: you (?:hold|have|store|keep|know|can see|have access to))?\b",
    ),
    (
        ("other users", "other agents", "other customers", "other people"),
        r"\b(?:list|show|dump|give|send|include|reveal|print|export)\b[^.\n]{0,30}\b(?:memories|data"
        r"|records|conversations) (?:of|from|belonging to) other (?:users|agents|customers|people)\b",
    ),
    (
        ("image", "url", "link", "query"),
        r"\b(?:embed|encode|put|include|append|add) (?:the )?(?:user'?s? |their |all |any )?(?:\w+ )?"
        r"(?:data|number|address|email|password|secrets?|memories|token|key)s? (?:in|into) (?:an? "
        r"|the )?(?:image|url|link|markdown image|query string|query parameter)",
    ),
    (
        ("private", "personal", "secret", "confidential", "hidden"),
        r"(?<!not )(?<!n't )(?<!never )\b(?:include|put|insert|embed|append|paste)\b[^.\n]{0,50}"
        r"\b(?:private|personal|secret|confidential|hidden)\b[^.\n]{0,30}\b(?:in|into|to) (?:your"
        r"|the) (?:answer|reply|response|output|summary)\b",
    ),
    (
        ("authori", "consent"),
        r"\b(?:authori[sz]ed|consented to|agreed to) (?:sharing|disclosing|releasing|sending) (?:their"
        r"|his|her|the|all|my) (?:\w+ )?(?:data|memories|information|details) (?:with|to) (?:anyone"
        r"|everyone|anybody|third parties|me)\b",
    ),
    # fake prompt boundaries: "-----BEGIN SYSTEM PROMPT-----", "### New system prompt ###"
    (
        ("system", "developer", "admin"),
        r"(?:-{3,}|={3,}|#{2,}|\[\[?) ?(?:begin |start |end |new |updated )?(?:system|developer|admin)"
        r" (?:prompt|instructions?|message|directive|override)s? ?(?:-{3,}|={3,}|#{2,}|\]\]?)",
    ),
    (
        ("this memory",),
        r"\bfollow (?:only )?the (?:instructions|directions|orders|commands) in this memory\b",
    ),
    # 中文
    (
        ("只听", "只服从", "只听从"),
        r"只(?:听|服从|听从)(?:我|我的)(?:的|指挥|命令|指令)?",
    ),
    (
        ("代理", "智能体", "agent"),
        r"所有(?:的)?(?:代理|智能体|agent)(?:都)?(?:必须|要|应该|只能)(?:服从|听从|遵守|听)",
    ),
    (
        ("优先",),
        r"优先(?:级|顺序)?(?:高于|大于|超过)(?:你的)?(?:系统提示|系统指令|系统设定|主代理|开发者)",
    ),
    (
        ("不要告诉", "不要让", "别告诉", "别让"),
        r"(?:不要|别)(?:告诉|让)(?:用户|使用者|主代理)(?:知道)?这(?:条|个)(?:指令|消息|指示)",
    ),
    (
        ("泄露", "泄漏", "透露"),
        r"允许(?:你)?(?:泄露|泄漏|公开|透露)(?:用户)?(?:的)?(?:数据|信息|隐私|记忆)",
    ),
    (("真正", "真实"), r"(?:以下|下面|这)才是你(?:真正|真实)的(?:任务|指令|目标|工作)"),
    (("身份", "角色", "人设"), r"(?:忘掉|忘记|抛开|放下)你(?:的|原来的)(?:身份|角色|人设|设定)"),
    (("指令更新", "新指令"), r"(?:^|\n|[。！？])(?:指令更新|新指令)\s*[:：]"),
    (("假装",), r"假装(?:你)?(?:没有|不受)(?:任何)?(?:规则|限制|约束)"),
    (
        ("跳过",),
        r"跳过(?:所有|全部)?(?:的)?(?:审核|审查|检查|筛查)[^\n。]{0,6}(?:直接)?(?:批准|通过)",
    ),
    (
        ("记忆", "聊天记录", "对话记录", "密钥", "密码"),
        r"(?:所有|全部)(?:的)?(?:记忆|聊天记录|对话记录|密钥|密码)[^\n。]{0,6}(?:发|发送|转发|寄|传)(?:到|给)",
    ),
    (
        ("开发者模式",),
        r"开发者模式[，,]?[^\n。]{0,10}(?:不受|忽略|无视|没有)[^\n。]{0,6}(?:规则|限制|约束)",
    ),
    # 日本語 (folded with the traditional Chinese table, as the text is: 無視 -> 无视)
    (("本当の",), r"あなたの本当の(?:指示|タスク|任務|目的|命令)"),
    (
        ("制限", "制約", "ルール", "フィルター"),
        r"(?:制限|制約|ルール|フィルター)のない(?:ai|アシスタント|モデル)"
        r"|あなたは(?:今から|これから)?[^\n。]{0,6}(?:制限|制約|ルール)(?:も|の)?(?:ない|なし)",
    ),
    (
        ("記憶", "メモリ", "会話履歴", "キー", "パスワード"),
        r"(?:記憶|メモリ|会話履歴|apiキー|パスワード)を(?:すべて|全て|全部)?[^\n。]{0,10}(?:送|転送|送信)",
    ),
    (("スキップ",), r"(?:審査|レビュー|チェック)をスキップ"),
    (
        ("通知", "メッセージ"),
        r"(?:システム|管理者|開発者)(?:通知|メッセージ|指示)\s*[:：][^\n]{0,30}?(?:無効|解除|停止|オフ)",
    ),
    (("守る必要",), r"(?:ルール|規則|制限|指示)を守る必要は(?:ありません|ない)"),
)
