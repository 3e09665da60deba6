#!/usr/bin/env python3
"""The editor files (editors/) against the lexer, so they cannot drift.

The TextMate grammar and the VS Code files must parse as JSON; the
grammar's keywords, and the Vim syntax's, must be exactly lang/lexer.re's,
and its duration units the lexer's. A small TextMate tokenizer (earliest
match wins, ties to the first pattern, a begin/end rule's end before its
patterns) runs the grammar on sample lines: every token of the samples
must get its scope, and every operator of the lexer one operator or
punctuation scope over all its characters. With vim installed, the Vim
syntax must give the samples' tokens their groups and a .sim file the
filetype sim. Prints a FAIL line per difference and a summary.
usage: check_editors.py ROOT"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

root = sys.argv[1]
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL editors: " + what)


def read(path):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read()


def load_json(path):
    try:
        return json.loads(read(path))
    except (OSError, ValueError) as e:
        check(False, "%s does not parse as JSON: %s" % (path, e))
        return None


# ---- what the lexer says ----
lexer = read("lang/lexer.re")
# "fn" { return FN; }   and   "<-"  { return ARROW; }
fixed = re.findall(r'^\s*"([^"]+)"\s*\{\s*return [A-Z_]+;\s*\}', lexer, re.M)
keywords = {t for t in fixed if t.isalpha()}
operators = [t for t in fixed if not t.isalpha()]
# [-+*/%<>=!(){}[\],;.:] { return *lx->token; }
single = re.search(r"^\s*\[(.*)\] \{ return \*lx->token; \}", lexer, re.M).group(1)
operators += list(single.replace("\\", ""))
units = set(re.search(r'^\s*unit\s*=\s*(.*);', lexer, re.M).group(1).replace('"', "").replace(" ", "").split("|"))
check(len(keywords) >= 10 and len(operators) >= 20 and units, "could not read the lexer's tokens")

# ---- the TextMate grammar ----
grammar = load_json("editors/simvm.tmLanguage.json")
if grammar is None:
    sys.exit(1)
repo = grammar["repository"]
words = set()
for rule in repo["keywords"]["patterns"]:
    m = re.match(r"\\b\(([a-z|]+)\)", rule["match"])
    if m:
        words.update(m.group(1).split("|"))
check(words == keywords, "the grammar's keywords %s differ from the lexer's %s" % (sorted(words), sorted(keywords)))
duration = next(r["match"] for r in repo["numbers"]["patterns"] if r.get("name", "").startswith("constant.numeric.duration"))
grammar_units = set(re.search(r"\(\?:((?:[a-z]+\|)*[a-z]+)\)\\b$", duration).group(1).split("|"))
check(grammar_units == units, "the grammar's duration units %s differ from the lexer's %s" % (sorted(grammar_units), sorted(units)))


def rules_of(patterns):
    """The patterns with every include expanded, in order."""
    out = []
    for p in patterns:
        if "include" in p:
            target = repo[p["include"].lstrip("#")]
            out += rules_of(target["patterns"]) if "patterns" in target and "match" not in target and "begin" not in target else [target]
        else:
            out.append(p)
    return out


def paint(scopes, m, name, captures):
    for i in range(m.start(), m.end()):
        if name:
            scopes[i].append(name)
    for group, c in (captures or {}).items():
        g = int(group)
        if m.group(g) is not None:
            for i in range(m.start(g), m.end(g)):
                scopes[i].append(c["name"])


def scan(line, pos, rules, scopes, end=None):
    """Tokenize line from pos; with `end`, stop at its match and return it."""
    while pos <= len(line):
        best = None
        candidates = ([(re.compile(end), None)] if end else []) + [(re.compile(r.get("match") or r["begin"]), r) for r in rules]
        for rx, rule in candidates:
            m = rx.search(line, pos)
            if m and (best is None or m.start() < best[0].start()):
                best = (m, rule)
        if best is None:
            return None
        m, rule = best
        if rule is None:
            return m
        if "match" in rule:
            paint(scopes, m, rule.get("name"), rule.get("captures"))
            pos = m.end() if m.end() > pos else pos + 1
        else:
            paint(scopes, m, None, rule.get("beginCaptures"))
            inner = [[] for _ in line]
            e = scan(line, m.end(), rules_of(rule.get("patterns", [])), inner, rule["end"])
            stop = e.end() if e else len(line)
            for i in range(m.start(), stop):
                if rule.get("name"):
                    scopes[i].insert(0, rule["name"])
                if m.end() <= i < (e.start() if e else stop):
                    scopes[i] += inner[i]
            if e:
                paint(scopes, e, None, rule.get("endCaptures"))
            pos = stop if stop > pos else pos + 1
    return None


def tokenize(line):
    scopes = [[] for _ in line]
    scan(line, 0, rules_of(grammar["patterns"]), scopes)
    return scopes


# (sample line, token, TextMate scope, Vim group): the token's first
# occurrence on the line gets the scope over every character, and the group
# at its first
samples = [
    ("fn worker(name, work) {", "fn", "storage.type.function.sim", "simFn"),
    ("fn worker(name, work) {", "worker", "entity.name.function.sim", "simFnName"),
    ("  r <- timeout(3ms, delay(work) >> return name ++ \" finished\")", "<-", "keyword.operator.bind.sim", "simOperator"),
    ("  r <- timeout(3ms, delay(work) >> return name ++ \" finished\")", "timeout", "entity.name.function.call.sim", ""),
    ("  r <- timeout(3ms, delay(work) >> return name ++ \" finished\")", "3ms", "constant.numeric.duration.sim", "simDuration"),
    ("  r <- timeout(3ms, delay(work) >> return name ++ \" finished\")", ">>", "keyword.operator.sequence.sim", "simOperator"),
    ("  r <- timeout(3ms, delay(work) >> return name ++ \" finished\")", "return", "keyword.control.flow.sim", "simKeyword"),
    ("  r <- timeout(3ms, delay(work) >> return name ++ \" finished\")", "++", "keyword.operator.concat.sim", "simOperator"),
    ("  r <- timeout(3ms, delay(work) >> return name ++ \" finished\")", "\" finished\"", "string.quoted.double.sim", "simString"),
    ("say(\"a\\tb\\x41\\q\\x00 -- no comment\" ++ show(1_000) ++ show(2.5e3) ++ show(1.5ms))  -- a comment", "\\t", "constant.character.escape.sim", "simEscape"),
    ("say(\"a\\tb\\x41\\q\\x00 -- no comment\" ++ show(1_000) ++ show(2.5e3) ++ show(1.5ms))  -- a comment", "\\x41", "constant.character.escape.sim", "simEscape"),
    ("say(\"a\\tb\\x41\\q\\x00 -- no comment\" ++ show(1_000) ++ show(2.5e3) ++ show(1.5ms))  -- a comment", "\\q", "invalid.illegal.escape.sim", "simBadEscape"),
    ("say(\"\\x00\")", "\\x", "invalid.illegal.escape.sim", "simBadEscape"),
    ("say(\"\\x00\")", "00", "string.quoted.double.sim", "simString"),
    ("let n = 1_x + 2.5e3x + 3ms_ + 1e5", "1_x", "invalid.illegal.numeric.sim", "simError"),
    ("let n = 1_x + 2.5e3x + 3ms_ + 1e5", "2.5e3x", "invalid.illegal.numeric.sim", "simError"),
    ("let n = 1_x + 2.5e3x + 3ms_ + 1e5", "3ms_", "invalid.illegal.numeric.sim", "simError"),
    ("let n = 1_x + 2.5e3x + 3ms_ + 1e5", "1e5", "constant.numeric.float.sim", "simFloat"),
    ("say(\"a\\tb\\x41\\q\\x00 -- no comment\" ++ show(1_000) ++ show(2.5e3) ++ show(1.5ms))  -- a comment", "-- no comment", "string.quoted.double.sim", "simString"),
    ("say(\"a\\tb\\x41\\q\\x00 -- no comment\" ++ show(1_000) ++ show(2.5e3) ++ show(1.5ms))  -- a comment", "1_000", "constant.numeric.integer.sim", "simNumber"),
    ("say(\"a\\tb\\x41\\q\\x00 -- no comment\" ++ show(1_000) ++ show(2.5e3) ++ show(1.5ms))  -- a comment", "2.5e3", "constant.numeric.float.sim", "simFloat"),
    ("say(\"a\\tb\\x41\\q\\x00 -- no comment\" ++ show(1_000) ++ show(2.5e3) ++ show(1.5ms))  -- a comment", "1.5ms", "constant.numeric.duration.sim", "simDuration"),
    ("say(\"a\\tb\\x41\\q\\x00 -- no comment\" ++ show(1_000) ++ show(2.5e3) ++ show(1.5ms))  -- a comment", "-- a comment", "comment.line.double-dash.sim", "simComment"),
    ("let x = if true then none else 10min", "let", "keyword.other.let.sim", "simKeyword"),
    ("let x = if true then none else 10min", "if", "keyword.control.conditional.sim", "simKeyword"),
    ("let x = if true then none else 10min", "true", "constant.language.sim", "simConstant"),
    ("let x = if true then none else 10min", "none", "constant.language.sim", "simConstant"),
    ("let x = if true then none else 10min", "10min", "invalid.illegal.numeric.sim", "simError"),
    ("let x = if true then none else 10min", "=", "keyword.operator.assignment.sim", "simOperator"),
    ("import \"net\"", "import", "keyword.control.import.sim", "simKeyword"),
    ("let r = #{a: 1, b: x2s}", "#{", "punctuation.section.record.begin.sim", "simDelimiter"),
    ("let r = #{a: 1, b: x2s}", "x2s", None, ""),
    ("let s = \"never closed", "\"never closed", "string.quoted.double.sim", "simString"),
    ("main = x-1--y", "--y", "comment.line.double-dash.sim", "simComment"),
    ("main = x-1--y", "-", "keyword.operator.arithmetic.sim", "simOperator"),
]
for line, token, scope, _ in samples:
    at = line.index(token)
    scopes = tokenize(line)[at:at + len(token)]
    if scope is None:
        ok = all(s == [] for s in scopes)
    else:
        ok = all(scope in s for s in scopes)
    check(ok, "the grammar gives %r in %r %s, not %s" % (token, line, scopes, scope or "no scope"))

for op in operators:
    line = "a %s b" % op
    scopes = tokenize(line)[2:2 + len(op)]
    first = [s for s in scopes[0] if s.startswith(("keyword.operator.", "punctuation."))]
    check(first and all(s == scopes[0] for s in scopes), "the grammar does not take the operator %r whole: %s" % (op, scopes))

# ---- VS Code ----
package = load_json("editors/vscode/package.json")
config = load_json("editors/vscode/language-configuration.json")
if package and config:
    contributes = package["contributes"]
    language = contributes["languages"][0]
    check(language["extensions"] == [".sim"] and contributes["grammars"][0]["language"] == language["id"],
          "package.json's language and grammar do not go together")
    check(contributes["grammars"][0]["scopeName"] == grammar["scopeName"], "package.json's scopeName is not the grammar's")
    path = os.path.join(root, "editors/vscode", contributes["grammars"][0]["path"])
    check(os.path.isfile(path) and os.path.samefile(path, os.path.join(root, "editors/simvm.tmLanguage.json")),
          "package.json's grammar path is not editors/simvm.tmLanguage.json")
    check(os.path.isfile(os.path.join(root, "editors/vscode", language["configuration"])), "package.json's configuration is missing")
    check(config["comments"]["lineComment"] == "--", "language-configuration.json's line comment is not --")

# ---- Vim ----
vim = read("editors/vim/syntax/sim.vim")
vim_words = set()
for group, rest in re.findall(r"^syn keyword (sim\w+) (.*)$", vim, re.M):
    if group != "simTodo":
        vim_words.update(w for w in rest.split() if "=" not in w and w not in ("skipwhite", "skipnl", "skipempty", "contained"))
check(vim_words == keywords, "sim.vim's keywords %s differ from the lexer's %s" % (sorted(vim_words), sorted(keywords)))
vim_units = set(re.search(r'^syn match simDuration ".*\\\(((?:[a-z]+\\\|)*[a-z]+)\\\)\\>"$', vim, re.M).group(1).split("\\|"))
check(vim_units == units, "sim.vim's duration units %s differ from the lexer's %s" % (sorted(vim_units), sorted(units)))

if shutil.which("vim"):
    with tempfile.TemporaryDirectory() as tmp:
        sample = os.path.join(tmp, "sample.sim")
        lines = list(dict.fromkeys(line for line, _, _, _ in samples))
        with open(sample, "w") as f:
            f.write("\n".join(lines) + "\n")
        queries = []
        for line, token, _, _ in samples:
            queries.append("%d %d" % (lines.index(line) + 1, line.index(token) + 1))
        out = os.path.join(tmp, "groups")
        script = os.path.join(tmp, "query.vim")
        with open(script, "w") as f:
            f.write("let out = [&filetype]\n")
            for q in queries:
                l, c = q.split()
                f.write("call add(out, synIDattr(synID(%s, %s, 1), 'name'))\n" % (l, c))
            f.write("call writefile(out, %s)\n" % json.dumps(out))
        subprocess.run(["vim", "-u", "NONE", "-i", "NONE", "-N", "-es", "-n",
                        "--cmd", "set rtp^=" + os.path.join(root, "editors/vim"),
                        "--cmd", "filetype on", "--cmd", "syntax on", "-c", "source " + script, "-c", "qa!", sample],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)
        try:
            with open(out) as f:
                got = f.read().split("\n")
        except OSError:
            got = []
        check(got[:1] == ["sim"], "vim does not give a .sim file the filetype sim: %s" % got[:1])
        for (line, token, _, group), name in zip(samples, got[1:]):
            check(name == group, "sim.vim gives %r in %r the group %r, not %r" % (token, line, name, group))
        check(len(got) >= len(samples) + 1, "vim answered %d of %d queries" % (len(got) - 1, len(samples)))
else:
    print("editors: vim is not installed; sim.vim's groups not checked")

print("editors: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
