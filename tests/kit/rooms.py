#!/usr/bin/env python3
"""rooms.py [ROOT]: checks that every #include of the program's C code runs
the way the house plan says (docs/internals/architecture.md): from the room
that uses to the room that serves, never up a floor, never into another
room's private header, never around a circle. Prints each offence and exits 1
when there is any; prints the rooms and their line counts otherwise.

The allowed directions are written here, once, as the plan: a room may
include its own headers and those of the rooms listed for it. A module is a
.c and its .h together; a circle is a cycle in the graph of modules joined
by their includes (two modules that include each other's headers, directly or
through others)."""
import os
import re
import sys

# room -> the rooms it may include (besides itself). Read bottom-up: the
# base helpers serve everyone; cli/ is the top and may use any room.
ALLOWED = {
    "common": [],
    "common/bench": ["common"],
    "common/results": ["common"],
    "common/ex": ["common", "common/bench"],
    "common/report": ["common", "common/bench", "common/results", "common/ex"],
    "proto": ["common", "common/bench", "common/results"],
    "coordinator": ["common", "common/bench", "common/results", "common/ex",
                    "common/report", "proto"],
    "worker/clients": ["common"],
    "worker/sql": ["common"],
    "worker/pair": ["common", "worker/clients"],
    "worker/exec": ["common", "common/bench", "common/results", "common/ex",
                    "worker/clients", "worker/sql", "worker/pair"],
    "worker/check": ["common", "common/bench", "worker/clients", "worker/sql",
                     "worker/exec"],
    "worker": ["common", "common/bench", "common/results", "common/ex", "proto",
               "worker/clients", "worker/pair", "worker/exec"],
    "cli": ["common", "common/bench", "common/results", "common/ex",
            "common/report", "proto", "coordinator", "worker", "worker/clients",
            "worker/sql", "worker/pair", "worker/exec", "worker/check"],
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def room_of(path):
    return os.path.dirname(path)


def module_of(path):
    """A module is NAME.c with NAME.h; a room's private NAME_int.h belongs to
    the module NAME of the room's face."""
    stem = path[:-2]
    return stem[:-4] if stem.endswith("_int") else stem


def private(header):
    """A header only its own room may include: NAME_int.h."""
    return header.endswith("_int.h")


def sources(root):
    out = []
    for room in ALLOWED:
        folder = os.path.join(root, room)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if name.endswith((".c", ".h")):
                out.append(os.path.join(room, name))
    return out


def check(root):
    problems = []
    graph = {}
    files = sources(root)
    known = set(files)
    for path in files:
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        room = room_of(path)
        module = module_of(path)
        for header in INCLUDE.findall(text):
            target_room = room_of(header)
            if header not in known:
                problems.append(f"{path}: includes {header}, which is no header of a room")
                continue
            if target_room != room and target_room not in ALLOWED[room]:
                problems.append(f"{path}: includes {header}: {room}/ may not import "
                                f"{target_room}/ (allowed: {', '.join(ALLOWED[room]) or 'none'})")
            if private(header) and target_room != room:
                problems.append(f"{path}: includes {header}, private to {target_room}/")
            target = module_of(header)
            if target != module:
                graph.setdefault(module, set()).add(target)
    problems += circles(graph)
    return problems, files


def circles(graph):
    """Each cycle of the module graph, once, as a path a -> b -> ... -> a."""
    found, seen = [], set()
    state = {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                cycle = stack[stack.index(nxt):] + [nxt]
                key = frozenset(cycle)
                if key not in seen:
                    seen.add(key)
                    found.append("circle: " + " -> ".join(cycle))
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    problems, files = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"rooms: {len(problems)} offence(s)")
        return 1
    lines = {}
    for path in files:
        with open(os.path.join(root, path), encoding="utf-8") as f:
            lines[room_of(path)] = lines.get(room_of(path), 0) + sum(1 for _ in f)
    for room in ALLOWED:
        if room in lines:
            print(f"{room + '/':16} {lines[room]:6} lines")
    print(f"rooms: {len(files)} files, every include runs down the plan")
    return 0


if __name__ == "__main__":
    sys.exit(main())
