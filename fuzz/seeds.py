#!/usr/bin/env python3
"""The seed corpus of each fuzz target, kept as text: fuzz/seeds/<target>.jsonl holds one input
per line as a JSON string. libFuzzer wants a directory of files, so `scripts/fuzz` expands the
seeds into fuzz/corpus/<target>/ (not in git) before each run.

    seeds.py expand TARGET        seeds/TARGET.jsonl -> corpus/TARGET/<sha1>
    seeds.py collect TARGET DIR   every UTF-8 input of at most 1 KiB in DIR -> seeds/TARGET.jsonl
                                  (sorted; DIR is a corpus minimised with -merge=1)
"""
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_SEED = 1024


def expand(target):
    corpus = os.path.join(HERE, "corpus", target)
    os.makedirs(corpus, exist_ok=True)
    path = os.path.join(HERE, "seeds", target + ".jsonl")
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as seeds:
        for line in seeds:
            data = json.loads(line).encode("utf-8")
            name = hashlib.sha1(data).hexdigest()
            with open(os.path.join(corpus, name), "wb") as out:
                out.write(data)


def collect(target, directory):
    inputs = set()
    for name in os.listdir(directory):
        with open(os.path.join(directory, name), "rb") as f:
            data = f.read()
        if len(data) > MAX_SEED:
            continue  # the fuzzer grows long inputs again from short ones
        try:
            inputs.add(data.decode("utf-8"))
        except UnicodeDecodeError:
            pass  # every target but the handshake and the REST readers skips them at once
    os.makedirs(os.path.join(HERE, "seeds"), exist_ok=True)
    with open(os.path.join(HERE, "seeds", target + ".jsonl"), "w", encoding="utf-8") as out:
        for text in sorted(inputs):
            out.write(json.dumps(text) + "\n")


if __name__ == "__main__":
    match sys.argv[1:]:
        case ["expand", target]:
            expand(target)
        case ["collect", target, directory]:
            collect(target, directory)
        case _:
            sys.exit(__doc__)
