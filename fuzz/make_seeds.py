#!/usr/bin/env python3
"""Writes the seed corpora in fuzz/corpus/<target>/ (kept in the repository).

Run from anywhere: `python3 fuzz/make_seeds.py [FIXTURES_DIR]`. Pieces of the
real v1 sessions in FIXTURES_DIR (default: ../shared/fixtures beside the
repository, as laid out for this project) are cut small; without that folder
only the hand-written seeds are (re)written. Seeds are named by content, so
running it again changes nothing unless the seeds below change.
"""

import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "shared", "fixtures")


def dumps(value):
    """JSON.stringify's spelling for the values used here."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def shorten(value, limit=48):
    """Cuts every long string (message texts, tool output) to `limit` characters."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit]
    if isinstance(value, list):
        return [shorten(v, limit) for v in value[:3]]
    if isinstance(value, dict):
        return {k: shorten(v, limit) for k, v in value.items()}
    return value


def write(target, name, data):
    if isinstance(data, str):
        # \udc80-\udcff stand for raw (invalid UTF-8) bytes.
        data = data.encode("utf-8", "surrogateescape")
    folder = os.path.join(HERE, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    digest = hashlib.sha1(data).hexdigest()[:10]
    with open(os.path.join(folder, f"{name}-{digest}"), "wb") as f:
        f.write(data)


def fixture_lines(name):
    path = os.path.join(FIXTURES, name)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


T = "2024-05-01T10:00:0{}.000Z"
HEADER_V3 = dumps({"type": "session", "version": 3, "id": "s1", "timestamp": T.format(0), "cwd": "/w"})


def msg(id, parent, role, text, t=1, **extra):
    entry = {"type": "message", "id": id, "parentId": parent, "timestamp": T.format(t)}
    entry.update(extra)
    content = [{"type": "text", "text": text}] if role == "assistant" else text
    entry["message"] = {"role": role, "content": content}
    return dumps(entry)


# ---- one line each -------------------------------------------------------

LINES = {
    "v3-user": msg("a1b2c3d4", None, "user", "hello"),
    "v3-assistant": msg("b2", "a1b2c3d4", "assistant", "hi \"there\"\n", 2),
    "v3-label": dumps({"type": "label", "id": "l1", "parentId": "b2", "timestamp": T.format(3), "targetId": "a1b2c3d4", "label": "start"}),
    "v3-label-clear": dumps({"type": "label", "id": "l2", "parentId": "l1", "targetId": "a1b2c3d4", "label": ""}),
    "v3-compaction": dumps({"type": "compaction", "id": "c1", "parentId": "b2", "timestamp": T.format(4), "summary": "s", "firstKeptEntryId": "b2", "tokensBefore": 1000}),
    "v3-context-edit": dumps({"type": "context_edit", "id": "e1", "parentId": "c1", "targetId": "b2"}),
    "v3-session-info": dumps({"type": "session_info", "id": "i1", "parentId": "e1", "name": "  my session \u3000"}),
    "v3-model-change": dumps({"type": "model_change", "id": "m1", "parentId": None, "provider": "anthropic", "modelId": "x"}),
    "v3-thinking": dumps({"type": "thinking_level_change", "id": "t1", "parentId": "m1", "thinkingLevel": "high"}),
    "v3-branch-summary": dumps({"type": "branch_summary", "id": "bs", "parentId": "a1b2c3d4", "fromId": "b2", "summary": "x"}),
    "v3-custom": dumps({"type": "custom", "id": "cu", "parentId": "bs", "customType": "k", "data": {"n": [1, 2.5, None]}}),
    "v3-header": HEADER_V3,
    "v2-header": dumps({"type": "session", "version": 2, "id": "s2", "timestamp": T.format(0), "cwd": "/w"}),
    "v2-hook-message": dumps({"type": "message", "id": "h1", "parentId": None, "message": {"role": "hookMessage", "content": "x"}}),
    "v1-compaction": dumps({"type": "compaction", "timestamp": T.format(5), "summary": "s", "firstKeptEntryIndex": 1}),
    "header-version-string": '{"type":"session","id":"s","version":"2"}',
    "header-version-null": '{"type":"session","id":"s","version":null}',
    "header-version-bool": '{"type":"session","id":"s","version":true}',
    "header-version-nan": '{"type":"session","id":"s","version":"abc"}',
    "header-id-number": '{"type":"session","id":5,"version":3}',
    "crlf": msg("a", None, "user", "x") + "\r",
    "spaces": ' { "type" : "message" , "id" : "a" , "parentId" : null , "message" : { "role" : "user" } } ',
    "tabs-newline-ws": '\t{"type":"label","targetId":"a","label":1}\t\r',
    "duplicate-keys": '{"id":"a","type":"label","id":"b","label":"x","label":"","targetId":"a","targetId":"b"}',
    "duplicate-many": "{" + ",".join(f'"k{i % 40}":{i}' for i in range(80)) + "}",
    "lone-surrogates": r'{"type":"message","id":"\ud800","parentId":"\udc00x","message":{"role":"user","content":"a\ud83d\ude00b\uDBFF"}}',
    "surrogate-pair-split": r'{"id":"\ud83d\\ude00","label":"\ud83d\u0041\ude00"}',
    "escapes": r'{"a":"\"\\\/\b\f\n\r\t\u0000\u001F\u007f\u00e9\u2028"}',
    "canonical-escapes": '{"a":"x\\"\\n\\u001f\\ud800","b":[true,null,{"c":1.5}],"d":1e+21}',
    "numbers": '{"a":1e400,"b":-0,"c":1.50,"d":12345678901234567890,"e":1e-7,"f":-1E+2,"g":0.1}',
    "number-ids": '{"type":"message","id":0,"parentId":-0,"targetId":1.5e300,"firstKeptEntryId":true,"message":{"role":5}}',
    "object-ids": '{"type":"message","id":{},"parentId":[1],"targetId":{"a":[]},"message":{"role":"assistant"}}',
    "message-null": '{"type":"message","id":"a","message":null}',
    "message-string": '{"type":"message","id":"a","message":"user"}',
    "timestamps": '{"type":"message","id":"a","timestamp":"2024-02-29T23:59:59.999Z","message":{"role":"user","timestamp":1700000000000}}',
    "timestamp-bad": '{"type":"message","id":"a","timestamp":"2023-02-29T00:00:00.000Z"}',
    "bom": "\ufeff{}",
    "primitive-zero": "0",
    "primitive-neg-zero": "-0.0",
    "primitive-string": '"s"',
    "primitive-empty-string": '""',
    "primitive-array": '[1,"a",{}]',
    "primitive-true": "true",
    "primitive-null": "null",
    "empty-object": "{}",
    "bad-trailing": '{"a":1}x',
    "bad-comma": "[1,]",
    "bad-leading-zero": "01",
    "bad-control": '"\t"',
    "bad-cut": '{"type":"mess',
    "deep-arrays": "[" * 3000 + "]" * 3000,
    "deep-objects": '{"a":' * 800 + "1" + "}" * 800,
    "deep-empty-objects": '{"type":"custom","id":"x","data":' + '{"":' * 10 + "{}" + "}" * 10 + ',"list":[[[[[[[[[]]]]]]]]]}',
    "deep-unclosed": "[{" * 1000,
    "deep-in-message": '{"type":"message","id":"d","message":{"role":"user","content":' + "[" * 500 + "]" * 500 + "}}",
}

INVALID_UTF8 = {
    "invalid-utf8-id": b'{"type":"message","id":"a\xff","message":{"role":"user","content":"\xe2\x82"}}',
    "invalid-utf8-cut-char": b'{"id":"\xe2\x82"}',
    "invalid-utf8-outside": b'{"a":1}\xff',
    "invalid-utf8-surrogate-bytes": b'{"id":"\xed\xa0\x80","label":"\\ud800\xed\xb0\x80"}',
    "invalid-utf8-overlong": b'{"type":"session_info","name":"\xe0\x80\xa0x\xc0\xa0"}',
}


def fixture_seeds():
    """Small pieces of the real v1 sessions: some lines, and files of a few lines."""
    lines = {}
    files = {}
    compaction = fixture_lines("v1-before-compaction.jsonl")
    large = fixture_lines("v1-large-session.jsonl")
    if compaction is None or large is None:
        return lines, files
    for name, entries in (("fx-compaction", compaction), ("fx-large", large)):
        seen = set()
        for entry in entries:
            message = entry.get("message")
            kind = (entry["type"], message.get("role") if isinstance(message, dict) else None)
            if kind in seen:
                continue
            seen.add(kind)
            lines[f"{name}-{kind[0]}-{kind[1]}"] = dumps(shorten(entry))
    # A v1 file with a compaction whose firstKeptEntryIndex points into it.
    header = shorten(compaction[0], 200)
    body = [shorten(e) for e in compaction[1:6]]
    summary = dict(shorten(compaction[359]), firstKeptEntryIndex=3)
    files["fx-v1-compaction"] = "\n".join(dumps(e) for e in [header] + body + [summary] + [shorten(compaction[360])]) + "\n"
    # A v1 file with thinking level and model changes, CRLF line ends, cut last line.
    picked = [large[0]] + [e for e in large[1:40] if e["type"] != "message"][:2] + large[1:5]
    text = "\r\n".join(dumps(shorten(e)) for e in picked)
    files["fx-v1-large-crlf-cut"] = text + "\r\n" + dumps(shorten(large[5]))[:30]
    return lines, files


def session_files():
    h = HEADER_V3
    a = msg("a", None, "user", "first", 1)
    b = msg("b", "a", "assistant", "reply", 2)
    c = msg("c", "a", "user", "other branch", 3)
    d = msg("d", "b", "user", "deeper", 4)
    label = LINES["v3-label"].replace('"b2"', '"d"').replace('"a1b2c3d4"', '"a"')
    comp = dumps({"type": "compaction", "id": "k", "parentId": "d", "timestamp": T.format(5), "summary": "s", "firstKeptEntryId": "b", "tokensBefore": 9})
    edit = dumps({"type": "context_edit", "id": "e", "parentId": "k", "targetId": "d"})
    after = msg("f", "e", "assistant", "after", 6)
    info = dumps({"type": "session_info", "id": "i", "parentId": "f", "name": " named "})
    files = {
        "v3-tree": "\n".join([h, a, b, c, d, label, comp, edit, after, info]) + "\n",
        "v3-unterminated": "\n".join([h, a, b]),
        "v3-crlf": "\r\n".join([h, a, b]) + "\r\n",
        "v3-cycle": "\n".join([h, msg("a", "b", "user", "x"), msg("b", "a", "user", "y")]) + "\n",
        "v3-self-parent": "\n".join([h, msg("a", "a", "user", "x")]) + "\n",
        "v3-repeated-ids": "\n".join([h, msg("b", "a", "user", "1"), msg("a", None, "user", "2"), msg("a", "z", "user", "3"), msg("z", None, "assistant", "4")]) + "\n",
        "v3-late-parent": "\n".join([h, msg("c", "b", "user", "1"), msg("b", "a", "user", "2"), msg("a", None, "user", "3")]) + "\n",
        "v3-null-message": "\n".join([h, a, '{"type":"message","id":"n","parentId":"a","message":null}']) + "\n",
        "v3-labels-on-path": "\n".join([h, a, b, label, dumps({"type": "label", "id": "l9", "parentId": "l1", "targetId": "b", "label": "x"}), d]) + "\n",
        "v3-garbage-lines": "\n".join([h, "", "not json", "0", "null", "[1]", "\"s\"", a, "{", b]) + "\n",
        "v3-blank-lines": "\n\n" + h + "\n\n" + a + "\n",
        "v3-second-header": "\n".join([h, a, HEADER_V3.replace('"s1"', '"s2"'), b]) + "\n",
        "v3-invalid-utf8": (h + "\n" + a.replace("first", "fi\udcffrst") + "\n" + dumps({"type": "session_info", "id": "i", "parentId": "a"})[:-1] + ',"name":"\udce0\udc80\udca0"}\n'),
        "v3-surrogates": h + "\n" + r'{"type":"message","id":"\ud800","parentId":null,"message":{"role":"user","content":"a\udc00"}}' + "\n",
        "v3-object-ids": h + "\n" + '{"type":"message","id":{},"parentId":null,"message":{"role":"user","content":"x"}}\n{"type":"message","id":[1],"parentId":{},"message":{"role":"assistant","content":[]}}\n',
        "v3-number-ids": h + "\n" + '{"type":"message","id":1,"parentId":null,"message":{"role":"user","content":"x"}}\n{"type":"message","id":2,"parentId":1,"message":{"role":"assistant","content":[{"type":"text","text":"y"}]}}\n',
        "v3-deep": h + "\n" + '{"type":"message","id":"d","parentId":null,"message":{"role":"user","content":"x","x":' + "[" * 2000 + "]" * 2000 + "}}\n",
        # A text block whose text is nested arrays: joined like Array.prototype.join.
        "v3-deep-text": h + "\n" + '{"type":"message","id":"d","parentId":null,"message":{"role":"user","content":[{"type":"text","text":' + "[" * 50 + "]" * 50 + "}]}}\n",
        "v3-content-shapes": h + "\n" + "\n".join([
            '{"type":"message","id":"1","message":{"role":"user","content":[{"type":"text","text":5},null]}}',
            '{"type":"message","id":"2","message":{"role":"assistant","content":[{"type":"image"},{"type":"text"}]}}',
            '{"type":"message","id":"3","message":{"role":"user","content":7}}',
        ]) + "\n",
        "v2-hook": "\n".join([LINES["v2-header"], LINES["v2-hook-message"], msg("b", "h1", "assistant", "x")]) + "\n",
        "v1-minimal": "\n".join([dumps({"type": "session", "id": "s", "timestamp": T.format(0)}), dumps({"type": "message", "message": {"role": "hookMessage", "content": "x"}}), LINES["v1-compaction"]]) + "\n",
        "v1-primitive": '{"type":"session","id":"s"}\n5\n',
        "v1-array-entry": '{"type":"session","id":"s"}\n[1]\n{"type":"message","message":{"role":"user","content":"x"}}\n',
        "version-nan": '{"type":"session","id":"s","version":"abc"}\n' + a + "\n",
        "not-a-session": '{"type":"message"}\n',
        "header-number-id": '{"type":"session","id":7,"version":3}\n' + a + "\n",
        # Found by session_file: the name is three U+FFFD to the reference.
        "regress-name-invalid-utf8": '{"type":"session","id":"s"}\n{"type":"session_info","name":"\udce0\udc80\udca0"}\n',
        "empty": "",
        "only-newlines": "\n\n\n",
    }
    return files


def main():
    fixture_lines_, fixture_files = fixture_seeds()
    for name, line in {**LINES, **fixture_lines_}.items():
        write("line_parser", name, line)
    for name, line in INVALID_UTF8.items():
        write("line_parser", name, line)
    for name, text in {**session_files(), **fixture_files}.items():
        write("session_file", name, text)


if __name__ == "__main__":
    main()
