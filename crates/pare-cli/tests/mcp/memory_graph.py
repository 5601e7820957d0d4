#!/usr/bin/env python3
"""Write a deterministic knowledge graph in the memory server's JSONL file format.

    memory_graph.py OUT.jsonl [ENTITIES] [SEED]

Several hundred entities of a few types, each with 1-4 observations, and about two
relations per entity. Same arguments, same bytes.
"""
import json
import random
import sys

TYPES = ["person", "project", "organization", "service", "document", "meeting"]
VERBS = ["works_on", "owns", "depends_on", "reports_to", "mentions", "attended", "maintains"]
WORDS = ("alpha beta gamma delta kafka postgres rust python deploy review budget quarterly "
         "latency migration onboarding incident roadmap design api cache index search").split()


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 7)
    names = []
    lines = []
    for i in range(n):
        etype = TYPES[rng.randrange(len(TYPES))]
        name = f"{etype.capitalize()}_{i:04d}_{rng.choice(WORDS)}"
        names.append(name)
        obs = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9))).capitalize() + "."
            for _ in range(rng.randint(1, 4))
        ]
        lines.append({"type": "entity", "name": name, "entityType": etype, "observations": obs})
    for i in range(n * 2):
        a, b = rng.sample(names, 2)
        lines.append({"type": "relation", "from": a, "to": b, "relationType": rng.choice(VERBS)})
    with open(out, "w") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
