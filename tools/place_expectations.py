#!/usr/bin/env python3
"""Rewrite a script test's expectations from what it prints now, each on the
line that produces it where the order allows (tests/run_scripts.sh reads
them in file order).

  python3 tools/place_expectations.py [--say-lines SIMVM] SIMVM FILE.sim...

SIMVM runs each script (from its directory, with its -- flags: and
-- args:), which must end with its -- expect-exit: status; stdout and
stderr become its expectations, in place of those it had:

- a stderr line "FILE:N: runtime error: MSG" of the script itself becomes
  `-- expect runtime error: MSG` at the end of line N;
- with --say-lines, a build of simvm that appends "FILE LINE COUNT" to the
  file named by $SIMVM_SAY_LINES for each say (the script line it runs
  on, outside the prelude, and the lines it prints), each say's line of
  stdout becomes `-- expect: TEXT` at the end of that line;
- each trailing expectation keeps the file order of its stream (stdout,
  stderr): the longest run of lines in order gets them, one per line, and
  the rest are lines of their own after the statement of the expectation
  before them; a stream that is mostly out of line order (a logging
  helper, many threads) stays one block at the end of the file.

Without --say-lines, stdout expectations stay lines of their own, at the
end. Used to convert the suite (issue 8); rerun it on a test whose output
changed on purpose, and read the diff.
"""
import os
import re
import subprocess
import sys
import tempfile

MARK = re.compile(r'\s*-- (expect|expect-stderr|expect runtime error):( |$)')


def field(lines, name):
    for line in lines:
        if line.startswith('-- %s:' % name):
            return line[len('-- %s:' % name):].strip()
    return ''


def longest_in_order(items):
    """Indices of a longest subsequence of items (line numbers or None) whose
    lines strictly increase."""
    best = {}  # index -> (length, previous index)
    for i, line in enumerate(items):
        if line is None:
            continue
        choice = (1, None)
        for j in range(i):
            if items[j] is not None and items[j] < line and best[j][0] + 1 > choice[0]:
                choice = (best[j][0] + 1, j)
        best[i] = choice
    if not best:
        return set()
    i = max(best, key=lambda k: (best[k][0], -k))
    chosen = set()
    while i is not None:
        chosen.add(i)
        i = best[i][1]
    return chosen


def place(stream, producers, taken):
    """For each item of a stream: ('trail', line) or ('after', line) (None:
    before the first trailing one / at the end)."""
    usable = [p if p is not None and p not in taken else None for p in producers]
    chosen = longest_in_order(usable)
    if 2 * len(chosen) < len(stream):
        chosen = set()  # mostly out of line order (a logging helper, threads): one block at the end
    for i in chosen:
        taken.add(usable[i])
    places, previous = [], None
    for i in range(len(stream)):
        if i in chosen:
            places.append(('trail', usable[i]))
            previous = usable[i]
        else:
            places.append(('after', previous))
    return places


def run_script(simvm, directory, name, flags, args, env=None):
    run = subprocess.run([simvm] + flags + [name] + args, cwd=directory, capture_output=True, env=env, timeout=60)
    return run.returncode, run.stdout.decode().split('\n')[:-1], run.stderr.decode().split('\n')[:-1]


def say_lines(say_simvm, directory, name, flags, args, count):
    """The script line each of `count` stdout lines is said on, or None."""
    lines = [None] * count
    if not say_simvm or any(flag.startswith('--trace') for flag in flags):
        return lines
    with tempfile.NamedTemporaryFile() as log:
        run_script(say_simvm, directory, name, flags, args, dict(os.environ, SIMVM_SAY_LINES=log.name))
        records = open(log.name).read().split('\n')[:-1]
    at = 0
    for record in records:
        file, line, n = record.rsplit(' ', 2)
        for _ in range(int(n)):
            if at < count:
                lines[at] = int(line) if file == name else None
            at += 1
    return lines


def balance(line):
    """Brackets a line opens minus those it closes, outside strings and
    comments."""
    depth, i, n = 0, 0, len(line)
    while i < n:
        c = line[i]
        if c == '"':
            i += 1
            while i < n and line[i] != '"':
                i += 2 if line[i] == '\\' else 1
        elif line.startswith('--', i):
            break
        elif c in '([{':
            depth += 1
        elif c in ')]}':
            depth -= 1
        i += 1
    return depth


def statement_end(code, line, limit):
    """The last line of the statement that starts on `line` (1-based): where
    the brackets it opens close, but not past `limit`."""
    depth = 0
    for number in range(line, min(limit, len(code)) + 1):
        depth += balance(code[number - 1])
        if depth <= 0:
            return number
    return line


def comment(kind, text, indent=''):
    return '%s-- %s:%s' % (indent, kind, ' ' + text if text != '' else '')


def convert(simvm, say_simvm, path):
    directory, name = os.path.split(os.path.abspath(path))
    with open(path) as f:
        original = f.read()
    lines = original.split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    flags = field(lines, 'flags').split()
    args = field(lines, 'args').split()
    want_exit = int(field(lines, 'expect-exit') or 0)

    # the code without its expectations, as the program runs (line numbers
    # in messages are those of the file as it is when run)
    code = []
    for line in lines:
        m = MARK.search(line)
        if m and line[:m.start()].strip() == '':
            continue  # an expectation line of its own
        code.append(line[:m.start()].rstrip() if m else line)
    while len(code) > 1 and code[-1].strip() == '' and code[-2].strip() == '':
        code.pop()  # at most one blank line at the end: before a block of expectations

    def write(text_lines):
        with open(path, 'w') as f:
            f.write('\n'.join(text_lines) + '\n')

    try:
        write(code)
        status, out, err = run_script(simvm, directory, name, flags, args)
        if status != want_exit:
            print('%s: exit %d, expected %d: left alone' % (path, status, want_exit))
            raise ValueError
        out_lines = say_lines(say_simvm, directory, name, flags, args, len(out))
        runtime = re.compile(r'^%s:(\d+): runtime error: (.*)$' % re.escape(name))
        err_lines = []
        for line in err:
            m = runtime.match(line)
            err_lines.append(int(m.group(1)) if m else None)

        taken = set()
        places = [place(out, out_lines, taken), place(err, err_lines, taken)]
        # where each expectation goes: trailing[line], after[line], before[line], end
        trailing, after, before, end = {}, {}, {}, []
        for stream, stream_places in enumerate(places):
            trails = [line for how, line in stream_places if how == 'trail']
            first = trails[0] if trails else None
            for i, (how, line) in enumerate(stream_places):
                item = (stream, i)
                if how == 'trail':
                    trailing[line] = item
                elif line is not None:
                    # after the statement that line starts, before the next trailing one
                    later = [t for t in trails if t > line]
                    end_line = statement_end(code, line, (later[0] - 1) if later else len(code))
                    after.setdefault(end_line, []).append((item, line))
                elif first is not None:
                    before.setdefault(first, []).append(item)
                else:
                    end.append(item)

        # the file with a placeholder per expectation, and where each lands
        layout, landed = [], {}
        for number, line in enumerate(code, 1):
            indent = re.match(r'\s*', line).group(0)
            for item in before.get(number, []):
                landed[item] = ('own', len(layout), indent)
                layout.append(None)
            if number in trailing:
                landed[trailing[number]] = ('trail', len(layout), line)
            layout.append(line)
            for item, start in after.get(number, []):
                landed[item] = ('own', len(layout), re.match(r'\s*', code[start - 1]).group(0))
                layout.append(None)
        if not end:
            while layout and layout[-1] is not None and layout[-1].strip() == '':
                layout.pop()
        for item in end:
            landed[item] = ('own', len(layout), '')
            layout.append(None)

        # run it as it will be (its lines moved) for the texts
        write([line if line is not None else '--' for line in layout])
        status2, out2, err2 = run_script(simvm, directory, name, flags, args)
        if status2 != status or len(out2) != len(out) or len(err2) != len(err):
            print('%s: the output changed with the expectations in place: left alone' % path)
            raise ValueError
        texts = [out2, err2]
        for (stream, i), (how, at, extra) in landed.items():
            text = texts[stream][i]
            if stream == 0:
                kind = 'expect'
            else:
                m = runtime.match(text)
                if how == 'trail' and m and int(m.group(1)) == at + 1:
                    kind, text = 'expect runtime error', m.group(2)
                else:
                    kind = 'expect-stderr'
                    if how == 'trail':  # not on its line after all: a line of its own after it
                        how, extra = 'own-after', re.match(r'\s*', extra).group(0)
            if how == 'trail':
                layout[at] = '%s  %s' % (extra, comment(kind, text))
            elif how == 'own':
                layout[at] = comment(kind, text, extra)
            else:
                print('%s: a runtime error moved off its line: left alone' % path)
                raise ValueError
        new = '\n'.join(layout) + '\n'
    except (ValueError, subprocess.TimeoutExpired):
        new = original
    with open(path, 'w') as f:
        f.write(new)
    if new != original:
        print('%s: rewritten' % path)


def main(argv):
    say_simvm = None
    if len(argv) > 2 and argv[1] == '--say-lines':
        say_simvm = os.path.abspath(argv[2])
        argv = argv[:1] + argv[3:]
    if len(argv) < 3:
        sys.exit(__doc__)
    simvm = os.path.abspath(argv[1])
    for path in argv[2:]:
        convert(simvm, say_simvm, path)


if __name__ == '__main__':
    main(sys.argv)
