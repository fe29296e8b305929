#!/usr/bin/env python3
"""Turns the public headers' plain comments into Doxygen comments (one-off
conversion, safe to run again): a file's opening comment becomes its @file
block, a comment that ends on the line before a declaration or #define
documents it, and a comment after code on the same line (struct members,
enum values) documents that member. Comments inside function bodies (static
inline helpers) and section comments followed by a blank line stay as they
are. Usage: scripts/doxify.py include/quiver/*.h"""
import re
import sys


def convert(text):
    lines = text.split("\n")
    out = list(lines)
    stack = []  # 'f' for a function body, 's' for a struct/enum/union/extern block
    in_comment = False
    comment_start = None  # (line, col) of the comment being read
    first_comment_done = False
    i = 0
    pending = []  # comments that ended at the line before i: (start_line, start_col, trailing)
    for i, line in enumerate(lines):
        j = 0
        code_seen = False
        while j < len(line):
            if in_comment:
                end = line.find("*/", j)
                if end < 0:
                    break
                in_comment = False
                sl, sc, trailing = comment_start
                # a comment closes: remember it for the next code line
                pending.append((sl, sc, trailing, i))
                j = end + 2
                continue
            c = line[j]
            if line.startswith("//", j):
                break
            if line.startswith("/*", j):
                in_comment = True
                comment_start = (i, j, code_seen)
                j += 2
                continue
            if c == '"':
                k = j + 1
                while k < len(line) and line[k] != '"':
                    k += 2 if line[k] == "\\" else 1
                j = k + 1
                code_seen = True
                continue
            if not c.isspace():
                code_seen = True
            if c == "{":
                before = line[:j]
                stack.append("f" if ")" in before and not re.search(r"\b(struct|enum|union)\b", before) else "s")
            elif c == "}":
                if stack:
                    stack.pop()
            j += 1
        in_function = "f" in stack
        # decide on the comments that closed on this line or before
        keep = []
        for sl, sc, trailing, el in pending:
            if in_function and not trailing:
                continue
            if trailing:
                if not in_function and not out[sl][sc:].startswith(("/**", "/*!")):
                    out[sl] = out[sl][:sc] + "/**<" + out[sl][sc + 2:]
                continue
            if not first_comment_done:
                first_comment_done = True
                if not out[sl][sc:].startswith("/**"):
                    out[sl] = out[sl][:sc] + "/** @file\n *" + out[sl][sc + 2:]
                continue
            keep.append((sl, sc, trailing, el))
        pending = []
        for sl, sc, trailing, el in keep:
            # the comment ended on line el; it documents what follows it
            # directly, unless the comment shares its last line with code
            nxt = el + 1
            if nxt >= len(lines):
                continue
            following = lines[nxt].strip()
            if not following or following.startswith(("#if", "#endif", "#else", "#elif", "#include", "#undef", "/*", "}")):
                continue
            if out[sl][sc:].startswith(("/**", "/*!")):
                continue
            out[sl] = out[sl][:sc] + "/**" + out[sl][sc + 2:]
        if in_comment:
            continue
    return "\n".join(out)


for path in sys.argv[1:]:
    with open(path) as f:
        text = f.read()
    new = convert(text)
    if new != text:
        with open(path, "w") as f:
            f.write(new)
