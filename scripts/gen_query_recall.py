#!/usr/bin/env python3
"""Make testdata/query_recall/: search responses of 50 code chunks from real code nobody on
this project wrote, each with a question whose answer the upstream score ranks 30th–40th.

    scripts/gen_query_recall.py PY_SRC_DIR... -- RUST_SRC_DIR... [--out testdata/query_recall]

Each function that has a doc comment (a Python docstring, Rust `///` lines) becomes a chunk:
its code with the doc comment taken out (as CodeSearchNet does, so the answer is not the
question's own words), 4 to 30 lines. A question is the first sentence of a function's
doc comment, when it reads as prose (no grammar rules, links, code or SAFETY notes); its response is that function and 49 others of the same language, with
upstream scores falling from 0.92 to 0.30 and the answer placed at a rank from 30 to 40.
Deterministic (seeded). The file holds the pool of chunks once and, per question, which
chunks at which scores; `chunk_id`, `hybrid_score`, `chunk_text`, `source_file` and
`context_header` are the fields of examples/policies/search.toml.
"""

import argparse
import ast
import json
import pathlib
import random
import re
import sys

MIN_LINES, MAX_LINES = 4, 30
PER_LANGUAGE = 12
RESULTS = 50


def askable(question: str) -> bool:
    """A sentence a person would ask with: prose, not a grammar rule, a link or a warning."""
    return (question[:1].isalpha() and not any(t in question for t in ("=", "[", "<", "`", "::"))
            and not question.upper().startswith(("SAFETY", "SEE ", "TODO", "NOTE")) and len(question.split()) >= 5)


def first_sentence(doc: str) -> str:
    doc = " ".join(doc.strip().split())
    m = re.match(r"(.+?[.!?])(\s|$)", doc)
    return (m.group(1) if m else doc)[:200]


def python_chunks(root: pathlib.Path):
    for path in sorted(root.rglob("*.py")):
        if "test" in path.name or "/test" in str(path):
            continue
        try:
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source)
        except (SyntaxError, UnicodeDecodeError):
            continue
        lines = source.splitlines()
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            doc = ast.get_docstring(node)
            if not doc or len(doc.split()) < 5 or node.name.startswith("_"):
                continue
            body = node.body[0]
            start, end = node.lineno - 1, node.end_lineno
            if node.decorator_list:
                start = node.decorator_list[0].lineno - 1
            text = lines[start : body.lineno - 1] + lines[body.end_lineno : end]
            if not (MIN_LINES <= len(text) <= MAX_LINES):
                continue
            yield {
                "path": str(path.relative_to(root.parent)),
                "name": node.name,
                "text": "\n".join(text),
                "question": first_sentence(doc),
                "line": start + 1,
            }


RUST_FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+|async\s+|unsafe\s+)*fn\s+([A-Za-z_][A-Za-z0-9_]*)")


def rust_chunks(root: pathlib.Path):
    for path in sorted(root.rglob("*.rs")):
        if "test" in str(path) or "bench" in str(path) or "example" in str(path):
            continue
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError:
            continue
        i = 0
        while i < len(lines):
            if not lines[i].strip().startswith("///"):
                i += 1
                continue
            doc_start = i
            while i < len(lines) and lines[i].strip().startswith("///"):
                i += 1
            attrs = i
            while i < len(lines) and lines[i].strip().startswith("#["):
                i += 1
            m = RUST_FN.match(lines[i]) if i < len(lines) else None
            if not m:
                continue
            depth, j, opened = 0, i, False
            while j < len(lines):
                depth += lines[j].count("{") - lines[j].count("}")
                opened |= "{" in lines[j]
                if opened and depth <= 0:
                    break
                if not opened and lines[j].rstrip().endswith(";"):
                    break
                j += 1
            text = lines[attrs : j + 1]
            doc = " ".join(l.strip()[3:].strip() for l in lines[doc_start:attrs])
            i = j + 1
            if not opened or not (MIN_LINES <= len(text) <= MAX_LINES) or len(doc.split()) < 5:
                continue
            if doc.startswith("#") or "```" in doc:
                continue
            yield {
                "path": str(path.relative_to(root.parent)),
                "name": m.group(4),
                "text": "\n".join(text),
                "question": first_sentence(doc),
                "line": attrs + 1,
            }


def build(pool, language, rng):
    # One chunk per name: a question must have one answer.
    names = {}
    for c in pool:
        names.setdefault(c["name"], []).append(c)
    unique = [v[0] for v in names.values() if len(v) == 1]
    # Questions come from the askable ones; every chunk may be a distractor.
    askers = [c for c in unique if askable(c["question"])]
    rng.shuffle(unique)
    chosen = unique[: 400]
    for k, c in enumerate(chosen):
        c["id"] = f"{language[:2]}{k:04d}"
    questions = []
    targets = [c for c in chosen if askable(c["question"])][:PER_LANGUAGE]
    for target in targets:
        others = [c for c in chosen if c is not target and c["path"] != target["path"]]
        picked = rng.sample(others, RESULTS - 1)
        answer_rank = rng.randint(30, 40)
        order = picked[: answer_rank - 1] + [target] + picked[answer_rank - 1 :]
        scores = sorted((round(rng.uniform(0.30, 0.92), 4) for _ in range(RESULTS)), reverse=True)
        # Distinct scores, so the answer's rank by score is exactly answer_rank.
        scores = [round(s - k * 1e-4, 4) for k, s in enumerate(scores)]
        questions.append({
            "language": language,
            "question": target["question"],
            "answer": target["id"],
            "answer_rank": answer_rank,
            "results": [[c["id"], s] for c, s in zip(order, scores)],
        })
    used = {cid for q in questions for cid, _ in q["results"]}
    chunks = [
        {"chunk_id": c["id"], "source_file": c["path"], "context_header": f"{pathlib.Path(c['path']).name} > {c['name']}",
         "line_start": c["line"], "chunk_text": c["text"]}
        for c in chosen if c["id"] in used
    ]
    return chunks, questions


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit(__doc__)
    cut = argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("rust", nargs="+")
    ap.add_argument("--out", default="testdata/query_recall")
    args = ap.parse_args(argv[cut + 1 :])
    py_dirs = [pathlib.Path(p) for p in argv[:cut]]
    rng = random.Random(20261126)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for language, dirs, reader in (("python", py_dirs, python_chunks), ("rust", [pathlib.Path(p) for p in args.rust], rust_chunks)):
        pool = [c for d in dirs for c in reader(d)]
        chunks, questions = build(pool, language, rng)
        doc = {"source": [str(d) for d in dirs], "chunks": chunks, "questions": questions}
        (out / f"{language}.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        print(f"{language}: {len(pool)} functions found, {len(chunks)} chunks, {len(questions)} questions", file=sys.stderr)


if __name__ == "__main__":
    main()
