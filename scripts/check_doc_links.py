#!/usr/bin/env python3
"""Check the relative links of README.md and docs/*.md: each target file (or directory)
exists, and each #anchor into a Markdown file names one of its headings (GitHub's slugs).

  scripts/check_doc_links.py [--allow-missing PATH]...   (PATH relative to the repository)
Exit 0 when every link resolves, 1 otherwise (each bad link printed as FILE:LINE: why)."""
import os, re, sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
allowed = {os.path.normpath(p) for i, p in enumerate(sys.argv) if i > 0 and sys.argv[i - 1] == "--allow-missing"}
files = ["README.md"] + sorted(os.path.join("docs", f) for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
link = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")

def slugs(path):
    out, fence = set(), False
    for line in open(path, encoding="utf-8"):
        if line.lstrip().startswith("```"):
            fence = not fence
        elif not fence and line.startswith("#"):
            s = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
            out.add(s)
    return out

bad = checked = 0
for f in files:
    lines, fence = [], False
    for line in open(os.path.join(root, f), encoding="utf-8"):
        if line.lstrip().startswith("```"):
            fence = not fence
            lines.append("\n")
        else:
            lines.append("\n" if fence else line)
    text = "".join(lines)  # fenced blocks blanked; a link's text may span lines
    for m in link.finditer(text):
        target, n = m.group(1), text.count("\n", 0, m.start()) + 1
        if re.match(r"^[a-z]+:", target):
            continue  # http:, https:, mailto:
        path, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
        checked += 1
        if not os.path.exists(os.path.join(root, dest)):
            if dest in allowed:
                print(f"{f}:{n}: {target}: not there yet (allowed)")
                continue
            print(f"{f}:{n}: {target}: no such file {dest}"); bad += 1
        elif anchor and dest.endswith(".md") and anchor not in slugs(os.path.join(root, dest)):
            print(f"{f}:{n}: {target}: no heading #{anchor} in {dest}"); bad += 1
print(f"{checked} relative links in {len(files)} files, {bad} broken")
sys.exit(1 if bad else 0)
