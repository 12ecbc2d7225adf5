#!/usr/bin/python3
"""Comments say why, not when: the comments of the code (src/, include/,
tools/, python/) carry no benchmark history.

A comment keeps the mechanism (why the code is as it is) and, where the
reason was a measurement, a link such as docs/performance.md#anchor; the
figures themselves, the GPU models they were taken on, the lab notebook's
versions, issue numbers and files that are not in the repository stay out.

What is checked, in comment text only (C, C++ and CUDA // and /* */ comments;
Python # comments and docstrings), so that an output format string such as
"Gcell/s=%.3f" or a variable v2 is left alone:
  - the patterns of FORBIDDEN below;
  - every docs/NAME.md or docs/NAME.md#anchor a comment names exists, with
    that heading (the anchors as tests/test_doc_links.py makes them).

usage: test_comment_hygiene.py [REPO_ROOT]   (default: this file's repository)
Exit 0 when no comment matches, 1 with file:line: text for each hit. """
import ast
import io
import os
import re
import sys
import tokenize

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
FOLDERS = ("src", "include", "tools", "python")
C_LIKE = (".c", ".h", ".cc", ".cpp", ".hpp", ".cu", ".cuh")

# (what it finds, the pattern).  A rate names a figure; a GPU model names the
# card a figure was taken on; the rest name history that is not in the tree.
FORBIDDEN = [
    ("a benchmark rate", re.compile(r"Gcell/s", re.I)),
    ("a GPU model", re.compile(r"\b(?:GH200|[HB]100|[HB]200|A100|A40|V100|L40S?|T4)s?\b")),
    ("a GPU model", re.compile(r"\b(?:GeForce|RTX|GTX|Quadro|Titan)\b")),
    ("a GPU model", re.compile(r"\b(?:Hopper|Ampere|Volta|Blackwell)\b")),
    ("the lab notebook", re.compile(r"\bNOTES\b")),
    ("a notebook version", re.compile(r"\bv[0-9]+\b")),
    ("a sweep round", re.compile(r"\bs[0-9]+/r[0-9]+\b")),
    ("an issue number", re.compile(r"\b[Ii]ssues? +(?:#\s*)?[0-9]+")),
    ("an issue number", re.compile(r"(?<![\w&])#[0-9]+\b")),
    ("a file not in the repository", re.compile(r"\b(?:SEEDS|MEASURED)\.md\b")),
    ("a file not in the repository", re.compile(r"\bbench/results\b")),
    ("a file not in the repository", re.compile(r"\bthe thesis\b", re.I)),
]

DOC_REF = re.compile(r"\bdocs/([A-Za-z0-9_.-]+\.md)(?:#([A-Za-z0-9_-]+))?")


def c_comments(text):
    """(line number, comment text) for each line of each // and /* */ comment
    of C-like source, skipping string and character literals."""
    out = []
    i, n, line = 0, len(text), 1
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
            i += 1
        elif ch in "\"'":
            i += 1
            while i < n and text[i] != ch and text[i] != "\n":
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append((line, text[i + 2:end]))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end
            for k, part in enumerate(text[i + 2:end].split("\n")):
                out.append((line + k, part))
            line += text.count("\n", i, end)
            i = end + 2
        else:
            i += 1
    return out


def py_comments(text):
    """(line number, text) of each # comment and of each line of each
    docstring (module, class, function) of Python source."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            out.append((tok.start[0], tok.string[1:]))
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                for k, part in enumerate(first.value.value.split("\n")):
                    out.append((first.lineno + k, part))
    return out


def doc_anchors(path, cache={}):
    """The heading anchors of a Markdown file, as tests/test_doc_links.py makes them."""
    if path not in cache:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import test_doc_links  # noqa: E402 (its ROOT is this one's: the same argv)
        cache[path] = test_doc_links.anchors(path)
    return cache[path]


def check(rel, comments, hits):
    for no, text in comments:
        for what, pattern in FORBIDDEN:
            m = pattern.search(text)
            if m:
                hits.append(f"{rel}:{no}: {what} ('{m.group(0)}'): {text.strip()}")
        for m in DOC_REF.finditer(text):
            doc = os.path.join(ROOT, "docs", m.group(1))
            if not os.path.isfile(doc):
                hits.append(f"{rel}:{no}: docs/{m.group(1)} does not exist: {text.strip()}")
            elif m.group(2) and m.group(2) not in doc_anchors(doc):
                hits.append(f"{rel}:{no}: no heading '{m.group(2)}' in docs/{m.group(1)}: {text.strip()}")


def main():
    hits, files = [], 0
    for folder in FOLDERS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, folder)):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, ROOT)
                if name.endswith(C_LIKE):
                    parse = c_comments
                elif name.endswith(".py"):
                    parse = py_comments
                else:
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                files += 1
                check(rel, parse(text), hits)
    if hits:
        print(f"{len(hits)} comment line(s) with benchmark history or a dangling reference "
              "(keep the mechanism; link docs/performance.md#anchor for a measured reason):")
        for h in hits:
            print("  " + h)
        return 1
    print(f"the comments of {files} files say why, not when")
    return 0


if __name__ == "__main__":
    sys.exit(main())
