#!/usr/bin/python3
"""Every link and file reference of the user-visible text resolves.

Checked files: README.md, CHANGELOG.md, docs/*.md, include/*.h and examples/*.
What is checked:
  - Markdown links and images [text](target) and <img src="target">: a
    relative target must exist (relative to the file's folder), and an anchor
    (file.md#anchor, or #anchor in the same file) must be one of the target's
    headings as GitHub makes their anchors (or an explicit <a id="...">);
  - repository paths: in Markdown, words in `backquotes` (and bare NAME.md
    words of the prose); in headers and examples, any word; a word counts as a repository path when its first
    part names a file or folder at the top of the repository (src/io/atomic.c,
    docs/cli.md#run, bench/results/h100/summary.csv), or a folder of src/
    (plan/skewed.h), or when it is a file name ending in .md (SEEDS.md): it
    must exist, and its anchor must exist as above.
Words with placeholders (<gpu-kind>, $OUT, *, {a,b}, or one of the words of
PLACEHOLDERS such as NAME in fuzz/fuzz_NAME.c) are left alone, and so are
paths under folders the repository ignores (build*/).

usage: test_doc_links.py [REPO_ROOT]   (default: this file's repository)
Exit 0 when everything resolves, 1 with a list of what does not. """
import fnmatch
import os
import re
import sys
import unicodedata

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))

MD_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_SRC = re.compile(r"""<(?:img|a)\s[^>]*?(?:src|href)\s*=\s*["']([^"']+)["']""", re.I)
HTML_ID = re.compile(r"""<a\s[^>]*?(?:id|name)\s*=\s*["']([^"']+)["']""", re.I)
BACKQUOTED = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
PATH_CHARS = re.compile(r"^[A-Za-z0-9_./#+-]+$")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)  # http:, https:, mailto:
# words that stand for a name the reader chooses (bench/results/GPU/summary.csv, NAME.parts.json)
PLACEHOLDERS = {"NAME", "OUT", "OUTDIR", "DIR", "FILE", "PREFIX", "PATH", "BUILD", "BUILD_DIR", "GPU", "KIND"}


def slug(text):
    """GitHub's anchor of a heading: markup dropped, lower case, punctuation
    other than '-' and '_' removed, spaces to '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "")
    text = text.strip().lower()
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in "-_" or cat[0] in "LN":
            out.append(ch)
        elif ch == " ":
            out.append("-")
    return "".join(out)


_anchors = {}


def anchors(path):
    """The anchors a Markdown file offers: its headings' slugs (numbered as
    GitHub numbers repeats) and explicit <a id/name>."""
    if path in _anchors:
        return _anchors[path]
    found, seen = set(), {}
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            m = HEADING.match(line)
            if m:
                s = slug(m.group(2))
                n = seen.get(s, 0)
                seen[s] = n + 1
                found.add(s if n == 0 else f"{s}-{n}")
            for a in HTML_ID.findall(line):
                found.add(a)
    _anchors[path] = found
    return found


def ignored_top(name):
    """Whether .gitignore ignores a top-level entry (its /NAME/ and /PREFIX*/ lines): build
    folders, which one checkout has and another does not."""
    path = os.path.join(ROOT, ".gitignore")
    if not os.path.exists(path):
        return name.startswith("build")
    with open(path, encoding="utf-8") as f:
        for line in f:
            pat = line.strip()
            if pat.startswith("/") and pat.endswith("/") and "/" not in pat[1:-1] and fnmatch.fnmatch(name, pat[1:-1]):
                return True
    return False


def top_entries():
    names = {n for n in os.listdir(ROOT) if n != ".git" and not ignored_top(n)}
    src = os.path.join(ROOT, "src")
    subs = {d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))} if os.path.isdir(src) else set()
    return names, subs


TOP, SRC_SUBS = top_entries()


def check_target(where, base_dir, target, problems, repo_path=False):
    """target: 'path', 'path#anchor' or '#anchor'."""
    if EXTERNAL.match(target) or target.startswith("//"):
        return
    path, _, anchor = target.partition("#")
    if path:
        candidates = []
        if repo_path:
            candidates.append(os.path.join(ROOT, path))
            first = path.split("/")[0]
            if first in SRC_SUBS:
                candidates.append(os.path.join(ROOT, "src", path))
            if "/" not in path:  # a bare NAME.md: beside the file, at the top, or in docs/
                candidates += [os.path.join(base_dir, path), os.path.join(ROOT, "docs", path)]
        else:
            candidates.append(os.path.normpath(os.path.join(base_dir, path)))
        hit = next((c for c in candidates if os.path.exists(c)), None)
        if not hit:
            problems.append(f"{where}: '{target}' does not exist")
            return
        if not os.path.realpath(hit).startswith(os.path.realpath(ROOT)):
            problems.append(f"{where}: '{target}' points outside the repository")
            return
        file = hit
    else:
        file = None
    if anchor:
        if file is None:
            file = where.rsplit(":", 1)[0]
            file = os.path.join(ROOT, file)
        if not file.endswith(".md"):
            problems.append(f"{where}: '{target}': an anchor on a file that is not Markdown")
        elif os.path.isdir(file) or anchor not in anchors(file):
            problems.append(f"{where}: '{target}': no heading or <a id> '{anchor}' in {os.path.relpath(file, ROOT)}")


def looks_like_repo_path(word):
    if not PATH_CHARS.match(word) or word.startswith("/") or word.startswith("#"):
        return False
    path = word.partition("#")[0].rstrip("/")
    if not path or ".." in path.split("/"):
        return False
    if any(part in PLACEHOLDERS for part in re.split(r"[/_.-]", path)):
        return False
    first = path.split("/")[0]
    if "/" in path:
        return first in TOP or first in SRC_SUBS
    return path.endswith(".md") and len(path) > 3


def words(text):
    for w in re.split(r"[\s,;()\[\]'\"=]+", text):
        w = w.strip("`.:!?*")
        if w:
            yield w


def check_markdown(rel, problems):
    path = os.path.join(ROOT, rel)
    base = os.path.dirname(path)
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            where = f"{rel}:{no}"
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            for t in MD_LINK.findall(line) + HTML_SRC.findall(line):
                if t.startswith("#"):
                    if t[1:] not in anchors(path):
                        problems.append(f"{where}: '{t}': no heading or <a id> '{t[1:]}' in {rel}")
                else:
                    check_target(where, base, t, problems)
            for q in BACKQUOTED.findall(line):
                for w in q.split():
                    if looks_like_repo_path(w):
                        check_target(where, base, w, problems, repo_path=True)
            # in the prose, a bare NAME.md (a file this text sends the reader to)
            prose = MD_LINK.sub(" ", BACKQUOTED.sub(" ", line))
            for w in words(prose):
                if w.partition("#")[0].endswith(".md") and "/" not in w and looks_like_repo_path(w):
                    check_target(where, base, w, problems, repo_path=True)


def check_text(rel, problems):
    path = os.path.join(ROOT, rel)
    with open(path, encoding="utf-8", errors="replace") as f:
        for no, line in enumerate(f, 1):
            for w in words(line):
                if looks_like_repo_path(w):
                    check_target(f"{rel}:{no}", os.path.dirname(path), w, problems, repo_path=True)


def main():
    files = [f for f in ("README.md", "CHANGELOG.md") if os.path.exists(os.path.join(ROOT, f))]
    for folder, exts in (("docs", (".md",)), ("include", (".h",)), ("examples", None)):
        d = os.path.join(ROOT, folder)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if os.path.isfile(os.path.join(d, name)) and (exts is None or name.endswith(exts)):
                files.append(f"{folder}/{name}")
    problems = []
    for rel in files:
        if rel.endswith(".md"):
            check_markdown(rel, problems)
        elif rel.endswith((".png", ".svg", ".npy")):
            continue
        else:
            check_text(rel, problems)
    if problems:
        print(f"{len(problems)} reference(s) that do not resolve (fix the text or the target):")
        for p in problems:
            print("  " + p)
        return 1
    print(f"every link and file reference resolves ({len(files)} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
