"""Redaction: every kind of secret and personal data is replaced, ordinary dialogue is not touched,
and no input makes the patterns backtrack for long."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gateway.core.screening import screening

_JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
_RSA = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA75hBnR9zW3Y0jGq4mXcT1k2sLpQ8vN6a\n"
    "Proc-Type: 4,ENCRYPTED\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB==\n"
    "-----END RSA PRIVATE KEY-----"
)
_OPENSSH = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\r\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\r\n"
    "AAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQAAACDx8\r\n-----END OPENSSH PRIVATE KEY-----"
)

# (text, kind, raw value that must not survive)
SENSITIVE: list[tuple[str, str, str]] = [
    # IBAN (issue 33 L6)
    ("Pay to DE89 3704 0044 0532 0130 00 by Friday", "iban", "3704 0044 0532"),
    # API keys
    ("my key is sk-proj-4fGh7Jk9Lm2Nq5Rt8Vw1Xy3Za6Bc0De", "api_key", "4fGh7Jk9Lm2Nq5Rt8Vw1"),
    ("OPENAI_API_KEY=sk-9aB8cD7eF6gH5iJ4kL3mN2oP1qR0sT", "api_key", "9aB8cD7eF6gH5iJ4kL3m"),
    (
        "claude: sk-ant-api03-Xy7Qw3Er5Ty8Ui1Op4As6Df9Gh2Jk5Lz-AbCdEf",
        "api_key",
        "Xy7Qw3Er5Ty8Ui1Op4",
    ),
    ("AWS id AKIAIOSFODNN7EXAMPLE in the config", "api_key", "AKIAIOSFODNN7EXAMPLE"),
    ("temporary creds ASIAY34FZKBOKMUTVV7A", "api_key", "ASIAY34FZKBOKMUTVV7A"),
    ("token ghp_R2d2C3po4Luk3Sky5Walk3rHan6Solo7Chew", "api_key", "R2d2C3po4Luk3Sky5Walk3r"),
    ("oauth gho_16C7e42F292c6912E7710c838347Ae178B4a", "api_key", "16C7e42F292c6912E771"),
    (
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzAB",
        "api_key",
        "11ABCDEFG0123456789",
    ),
    ("slack bot xoxb-2048-4096-aB3dE5gH7jK9", "api_key", "2048-4096-aB3dE5gH7jK9"),
    (
        "user token xoxp-1234567890-1234567890-abcdef1234567890abcdef",
        "api_key",
        "abcdef1234567890abc",
    ),
    # JWT
    (f"session {_JWT}", "jwt", "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV"),
    (f"Authorization: Bearer {_JWT}", "jwt", "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6"),
    # private keys
    (f"here is the key:\n{_RSA}\nthanks", "private_key", "MIIEpAIBAAKCAQEA75hBnR9zW3Y0jGq4mXcT"),
    (f"deploy key {_OPENSSH} ok", "private_key", "AAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQ"),
    (
        "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oJlrcJZ0jr3toAoGCCqGSM49",
        "private_key",
        "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oJlr",
    ),
    # passwords: the label stays, the value goes
    ("password: hunter2", "password", "hunter2"),
    ("passwd=Tr0ub4dor&3", "password", "Tr0ub4dor&3"),
    ("pwd: 8xq!Lm2p, don't share it", "password", "8xq!Lm2p"),
    ("WiFi 密码：Abc123456，别告诉别人", "password", "Abc123456"),
    ("登录密码: qwe@2024", "password", "qwe@2024"),
    ("my password is Summer2024!", "password", "Summer2024"),
    ('{"user": "ann", "password": "p@ssw0rd"}', "password", "p@ssw0rd"),
    ("db at mysql://root:toor123@db.internal:3306/app", "password", "toor123"),
    ("网银密码是abc12345", "password", "abc12345"),
    # secrets
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "secret",
        "wJalrXUtnFEMI/K7MDENG",
    ),
    ("secret: 9Zq4Lr7Tx2Vb5Nm8Kp3Wc6Yd", "secret", "9Zq4Lr7Tx2Vb5Nm8Kp3Wc6Yd"),
    ("the key is Kx8vT2mQ9rL4wN7pZ3sB6yH1cF5dJ0gA2eR8tU4i ok", "secret", "Kx8vT2mQ9rL4wN7pZ3sB"),
    ("use 7fQ2xLp9ZkR4mW8vT3nB6yH1cJ5dG0sA to log in", "secret", "7fQ2xLp9ZkR4mW8vT3nB"),
    ("client_secret=GOCSPX-abc123DEF456ghi789JKL", "secret", "GOCSPX-abc123DEF456"),
    ("api_key: 3f9a8b7c6d5e4f30", "secret", "3f9a8b7c6d5e4f30"),
    # email
    ("mail me: a.b+c@example.co.uk", "email", "a.b+c@example.co.uk"),
    ("张三的邮箱是zhangsan@qq.com，有事联系", "email", "zhangsan@qq.com"),
    # PRC ID: 18 digits with a valid check character, 15 digits with a valid birth date
    ("身份证 11010519491231002X", "cn_id", "11010519491231002X"),
    ("身份证号：44030419851015123x", "cn_id", "44030419851015123x"),
    ("ID 510107197811220034 on file", "cn_id", "510107197811220034"),
    ("老身份证110105491231002还能用吗", "cn_id", "110105491231002"),
    # payment cards (Luhn-valid)
    ("card 4111 1111 1111 1111 exp 12/27", "card", "4111 1111 1111 1111"),
    ("mastercard 5555-5555-5555-4444", "card", "5555-5555-5555-4444"),
    ("Amex 3782 822463 10005", "card", "3782 822463 10005"),
    ("amex 378282246310005", "card", "378282246310005"),
    ("银行卡6222021234567890128", "card", "6222021234567890128"),
    ("discover 6011111111111117", "card", "6011111111111117"),
    # SSN
    ("SSN 123-45-6789", "ssn", "123-45-6789"),
    ("social security number 219 09 9999", "ssn", "219 09 9999"),
    ("ssn: 078051120", "ssn", "078051120"),
    # IP addresses
    ("the NAS is at 192.168.1.10", "ip", "192.168.1.10"),
    ("服务器地址是10.20.30.40，端口22", "ip", "10.20.30.40"),
    ("v6 2001:db8:85a3::8a2e:370:7334 works", "ip", "2001:db8:85a3::8a2e:370:7334"),
    ("link fe80:0:0:0:200:f8ff:fe21:67cf", "ip", "fe80:0:0:0:200:f8ff:fe21:67cf"),
    # passports
    ("passport E12345678", "passport", "E12345678"),
    ("US passport number: 123456789", "passport", "123456789"),
    ("护照号码：EA1234567", "passport", "EA1234567"),
    ("my Passport No. is 987654321.", "passport", "987654321"),
    # phones
    ("我的手机是 13812345678", "phone", "13812345678"),
    ("call +86 138 1234 5678 now", "phone", "138 1234 5678"),
    ("北京办公室 010-12345678", "phone", "12345678"),
    ("深圳 0755-1234567", "phone", "1234567"),
    ("上海总机 (021) 87654321", "phone", "87654321"),
    ("text me at 4155550123", "phone", "4155550123"),
    ("cell 415-555-0123", "phone", "415-555-0123"),
    ("US office (415) 555-0100", "phone", "555-0100"),
    ("+1 415 555 0123 after 5", "phone", "555 0123"),
    ("London +44 20 7946 0958", "phone", "7946 0958"),
    ("fax 415.555.0123", "phone", "415.555.0123"),
    # typed with a full-width input method
    ("手机号１３８１２３４５６７８，谢谢", "phone", "１３８１２３４５６７８"),
    ("邮箱ａｎｎ＠ｅｘａｍｐｌｅ．ｃｏｍ", "email", "ａｎｎ＠ｅｘａｍｐｌｅ"),
]


@pytest.mark.parametrize(("text", "kind", "raw"), SENSITIVE)
def test_sensitive_value_is_redacted(text: str, kind: str, raw: str) -> None:
    clean, kinds = screening.redact(text)
    assert raw not in clean, clean
    assert kind in kinds and f"[{kind.upper()}]" in clean, (clean, kinds)


def test_sensitive_table_covers_every_kind() -> None:
    assert len(SENSITIVE) >= 40
    assert {kind for _, kind, _ in SENSITIVE} == set(screening.KINDS)


def test_labels_and_punctuation_stay_readable() -> None:
    assert screening.redact("password: hunter2.")[0] == "password: [PASSWORD]."
    assert screening.redact("密码：abc12345，记住")[0] == "密码：[PASSWORD]，记住"
    assert screening.redact("my password is weak, sadly")[0] == "my password is weak, sadly"
    assert screening.redact("ftp://u:pw123@h")[0] == "ftp://u:[PASSWORD]@h"


def test_redaction_is_idempotent() -> None:
    for text, _, _ in SENSITIVE:
        once, _ = screening.redact(text)
        assert screening.redact(once) == (once, []), once


@pytest.mark.parametrize(
    "text",
    [
        "card 4111 1111 1111 1112",  # fails Luhn
        "order 6222021234567890123",  # fails Luhn
        "身份证 110105194912310021",  # wrong check character
        "id 110105491331002",  # 15 digits, month 13
        "ssn 000-12-3456 and 666-12-3456",  # invalid areas
        "call 1234567890 or 555-1234",  # area code cannot start with 1; 7 digits
        "ip 999.1.1.1 and 127.0.0.1",  # not an address; loopback
    ],
)
def test_values_failing_validation_are_kept(text: str) -> None:
    assert screening.redact(text) == (text, [])


BENIGN = [
    "Let's meet on 2023-05-12 at 10:30 in the lobby.",
    "The invoice dated 12/05/2023 was paid on May 12.",
    "The laptop costs $1,299.99 before tax.",
    "Sales grew 12.5% year over year in 2022.",
    "Please upgrade to v1.2.3 before Friday.",
    "We are running Python 3.11.7 and Node 18.17.1 in production.",
    "My order number is 1234567812345678, can you check it?",
    "Ticket #4821-3390-1177 was escalated to tier two.",
    "Your tracking number is 9400111899223344556677.",
    "Flight CA1234 departs at 7:45 pm from gate 23.",
    "I live at 1600 Pennsylvania Avenue, apartment 4B.",
    "The ISBN is 978-3-16-148410-0.",
    "ISBN 9780306406157 is the second edition.",
    "Antidisestablishmentarianism is a very long English word.",
    "The function getUserProfileByIdentifier returns None when missing.",
    "Check https://github.com/python/cpython/blob/main/README.rst for details.",
    "Open https://www.example.com/search?q=memory+gateway&page=2 in a new tab.",
    "The request id was 123e4567-e89b-12d3-a456-426614174000.",
    "sha256: 9f86d081884c7d659a2feaa0c55ad015a2bf4f1b2b0b822cd15d6c15b0f00a08",
    "Commit 3f2a9c1d4e5b6a7980c1d2e3f4a5b6c7d8e9f0a1 fixed the regression.",
    "The meeting moved from 3 pm to 4:15 pm on Tuesday, 14 March.",
    "We sold 1,250,000 units in Q3 2024.",
    "Room 1204, building 7, 88 Century Avenue.",
    "The temperature dropped to -5°C overnight.",
    "He ran the marathon in 3:42:17.",
    "Set the timeout to 30000 ms and retries to 5.",
    "The password policy requires 12 characters.",
    "I forgot my password again, can you remind me how to reset it?",
    "My password is weak, I should change it.",
    "The API key rotation happens every 90 days.",
    "Use the token bucket algorithm for rate limiting.",
    "The secret to good bread is patience.",
    "Chapter 3.2.1 covers error handling.",
    "Version 2.10.4 of the app was released on 2024-01-31.",
    "The zip code is 94103 and the park is about 2.5 km across.",
    "Order #20230512-0042 shipped yesterday.",
    "The score was 21-14 at halftime.",
    "The recipe needs 250 g flour, 2 eggs and 1/2 cup milk.",
    "The dataset has 4096 rows and 128 columns; PR #1532 merged it.",
    "TCP port 8080 is already in use on localhost.",
    "Our SLA is 99.95% uptime per month.",
    "Use snake_case_names_for_python_variables_please in this repo.",
    "The class is AbstractSingletonProxyFactoryBean2 in Spring.",
    "HttpServletRequestWrapper3Impl wraps the request.",
    "Dimensions: 1920x1080 at 60 Hz.",
    "The model name is gpt-4o-mini-2024-07-18.",
    "Call extension 4021 at the front desk.",
    "Coordinates 37.7749, -122.4194 mark San Francisco.",
    "He is 6 ft 2 in tall and was born in 1987.",
    "Unix time 1683878400 is when the job ran.",
    "The docs live at https://docs.python.org/3/library/re.html#module-re.",
    "Meet me at 9:00, or call after 18:30.",
    "我明天下午三点在公司开会。",
    "这个季度的营收增长了百分之十二。",
    "订单号 20230512004216 已发货，预计周五送达。",
    "我的生日是1990年3月7日。",
    "会议室在3楼305房间。",
    "请把报告发到共享文件夹里。",
    "这本书的价格是¥59.80，我在淘宝上花了¥3800买了电视。",
    "我们使用的是 Python 3.11 版本。",
    "航班 MU5101 晚点了两个小时。",
    "他住在北京市朝阳区建国路88号。",
    "今天的气温是 25°C，湿度 60%。",
    "密码学是一门很有意思的课程。",
    "我忘记密码了，怎么重置？",
    "版本号是 v2.3.1，发布于2024年1月。",
    "快递单号是 SF1234567890123。",
    "火车 G1234 次列车八点出发。",
    "2024年第三季度销售额为1,250万元，同比增长8.5%。",
    "我的护照快过期了，需要续签。",
    "３月５日在Ａ座２０１开会，记得带电脑！",
]


@pytest.mark.parametrize("text", BENIGN)
def test_ordinary_dialogue_is_unchanged(text: str) -> None:
    assert screening.redact(text) == (text, [])


@pytest.mark.parametrize(
    "digits",
    ["13812345678", "4155550123", "4111111111111111", "510107197811220034", "110105491231002"],
)
def test_digit_runs_inside_hex_ids_are_kept(digits: str) -> None:
    """A memory id or digest can hold a run that looks like a phone, card or ID number; it is an
    identifier (an edited proposal's reason names the id it was written as), so it stays whole."""
    for text in (
        f"edited into ae9d20a3f{digits}a82ee6e6ede9: typo",
        f"sha {digits}ae9d20a3fa82ee6e6ede9",
        f"digest ae9d20a3fa82ee6e6ede9{digits}",
    ):
        assert screening.redact(text) == (text, []), text
    # the same digits standing on their own (or after a word) are still redacted
    assert screening.redact(f"call {digits} now")[1] != []


def test_benign_table_is_large_enough() -> None:
    assert len(BENIGN) >= 60


def test_plain_numbers_are_not_pii() -> None:
    clean, kinds = screening.redact("order 42 costs 1999 yuan, version 3.11.7, year 2026")
    assert kinds == [] and clean == "order 42 costs 1999 yuan, version 3.11.7, year 2026"


@pytest.mark.parametrize(
    "text",
    [
        "a" * 100_000,
        "a@" * 50_000,
        "1 " * 50_000,
        "1-" * 50_000,
        "+1 " * 33_000,
        "1." * 50_000,
        "a:" * 50_000,
        "-----BEGIN RSA PRIVATE KEY-----" * 3_300,
        "-----BEGIN RSA PRIVATE KEY-----\n" + "QUJD" * 25_000,
        "eyJ" + "a" * 100_000,
        "password: " + "x" * 100_000,
        "passport " * 11_000,
        "aB3" * 33_000,
        "Xk9aB2cD4eF6gH8iJ0kL2mN4oP6qR8sT " * 3_000,
        "1234 " * 20_000,
        ("".join(f"{i:x}:" for i in range(20)) + " ") * 1_500,
    ],
)
def test_no_input_makes_redaction_slow(text: str) -> None:
    start = time.perf_counter()
    screening.screen(text)
    assert time.perf_counter() - start < 2.0


def test_escape_block_neutralises_the_memory_delimiters() -> None:
    text = "fact </memory> then < / MEMORY > and <Memory id='x'> and </mem\u200bory end"
    out = screening.escape_block(text)
    assert "<" not in out and "memory" in out
    assert out == "fact ‹/memory› then ‹/memory › and ‹memory id='x'› and ‹/memory end"
    assert screening.escape_block("＜/memory＞") == "‹/memory›"
    assert screening.escape_block("</ＭＥＭＯＲＹ> </mеmоry>") == "‹/memory› ‹/memory›"
    for plain in ("I have a good memory", "a < b and c > d", "<memo> and <memories>"):
        assert screening.escape_block(plain) == plain


def test_security_doc_lists_every_kind() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "SECURITY.md").read_text(encoding="utf-8")
    for kind in screening.KINDS:
        assert f"`[{kind.upper()}]`" in doc, kind
