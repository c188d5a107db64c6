#!/usr/bin/env python3
"""The runtime's layers, checked on its object files: which file uses which (a function it calls or a
table it takes the address of, read from `nm`: what one object leaves undefined and another defines).
Fails when two files use each other through any chain (a cycle), when a file uses one of a higher
layer, or when a file is in no layer (add it to LAYERS, the same list as docs/design.md's).

    check_layers.py NM OBJECT...
"""
import os
import subprocess
import sys

# Lowest first. A file may use files of its own layer or below, never above (docs/design.md).
LAYERS = [
    ("utilities", "dtype error handles kernel_errors memory_plan shape_expr value_store cuda_driver"),
    ("model", "model model_validate loops_validate known_at lifetimes weights"),
    ("host ops", "host_ops host_util host_cache host_reduce host_scan host_select host_sequence host_string "
                 "host_split_to_sequence host_string_concat host_string_split host_tfidf host_unique host_value"),
    ("executor", "plan execute kv_cache step_kinds step_kernel step_host step_control loops cuda_session"),
    ("public API", "session bind values_api cache_api cuda_api model_open"),
]
LAYER = {name: i for i, (_, files) in enumerate(LAYERS) for name in files.split()}


def symbols(nm, obj):
    """(defined, undefined) global symbol names of one object file."""
    out = subprocess.run([nm, "-P", obj], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind.isupper():
            defined.add(name)
    return defined, undefined


def file_name(obj):
    base = os.path.basename(obj)  # step_host.c.o
    return base.split(".")[0]


def find_cycle(uses):
    """One cycle of the graph as a list of files, or None."""
    state = {}  # 1: on the current path, 2: done
    path = []

    def visit(f):
        state[f] = 1
        path.append(f)
        for g in sorted(uses[f]):
            if state.get(g) == 1:
                return path[path.index(g):] + [g]
            if g not in state:
                found = visit(g)
                if found:
                    return found
        path.pop()
        state[f] = 2
        return None

    for f in sorted(uses):
        if f not in state:
            found = visit(f)
            if found:
                return found
    return None


def main():
    nm, objects = sys.argv[1], sys.argv[2:]
    if not objects:
        sys.exit("check_layers: no object files given")
    defined, undefined = {}, {}
    for obj in objects:
        f = file_name(obj)
        defined[f], undefined[f] = symbols(nm, obj)
    owner = {s: f for f, names in defined.items() for s in names}
    uses = {f: {owner[s] for s in undefined[f] if s in owner and owner[s] != f} for f in defined}

    problems = []
    for f in sorted(uses):
        if f not in LAYER:
            problems.append(f"{f}.c is in no layer: add it to LAYERS here and to docs/design.md")
    for f in sorted(uses):
        for g in sorted(uses[f]):
            if f in LAYER and g in LAYER and LAYER[g] > LAYER[f]:
                why = sorted(s for s in undefined[f] if owner.get(s) == g)
                problems.append(f"{f}.c ({LAYERS[LAYER[f]][0]}) uses {g}.c ({LAYERS[LAYER[g]][0]}), a higher "
                                f"layer: {', '.join(why)}")
    cycle = find_cycle(uses)
    if cycle:
        problems.append("call cycle: " + " -> ".join(f + ".c" for f in cycle))
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    edges = sum(len(v) for v in uses.values())
    print(f"runtime layers: {len(uses)} files, {edges} uses between them, no cycle, none upward")


if __name__ == "__main__":
    main()
