#!/usr/bin/env python3
"""Module import graph of the workspace's crates, and its cycles.

For every crate under the workspace, each source file is a module
(`aggregator/src/api/leader.rs` is `api::leader`). Every path a file
names through `crate::` or `super::` (in `use` items or inline) is an
edge to the deepest module it reaches. An edge is reported between the
two siblings under the nearest common parent (`rest::members ->
rest::objects`, `raft -> server`), so parent/child references are not
edges. Prints the edges per crate, then the cycles (strongly connected
sibling groups); exits 1 when there is a cycle and --check is given.

Usage: scripts/import-graph.py [--check] [CRATE_DIR...]
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def crates():
    out = []
    for entry in sorted(os.listdir(ROOT)):
        src = os.path.join(ROOT, entry, "src")
        if os.path.isfile(os.path.join(ROOT, entry, "Cargo.toml")) and os.path.isdir(src):
            out.append(entry)
        # Nested packages (e.g. aggregator/ctl).
        if os.path.isdir(os.path.join(ROOT, entry)) and entry not in ("target",):
            for sub in sorted(os.listdir(os.path.join(ROOT, entry))):
                nested = os.path.join(ROOT, entry, sub)
                if os.path.isfile(os.path.join(nested, "Cargo.toml")) and os.path.isdir(
                    os.path.join(nested, "src")
                ) and sub not in ("fuzz",):
                    out.append(os.path.join(entry, sub))
    return out


def module_of(src, path):
    rel = os.path.relpath(path, src)[: -len(".rs")]
    parts = rel.split(os.sep)
    if parts[-1] in ("lib", "main", "mod"):
        parts = parts[:-1]
    if parts and parts[0] == "bin":
        return None
    return tuple(parts)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//")[0] for line in text.splitlines())


def expand_use(tree):
    """Expand a use tree (`a::{b, c::d}`) into paths."""
    tree = tree.strip()
    m = re.match(r"^(.*?)\{(.*)\}$", tree, flags=re.S)
    if not m:
        return [tree.split(" as ")[0].strip()]
    prefix, inner = m.group(1), m.group(2)
    items, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    out = []
    for item in items:
        if item.strip():
            out.extend(prefix + p for p in expand_use(item))
    return out


def references(text):
    text = strip_comments(text)
    paths = []
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        paths.extend(expand_use(m.group(1)))
    for m in re.finditer(r"\b((?:crate|super)(?:::\w+)+)", text):
        paths.append(m.group(1))
    return paths


def resolve(module, path, modules):
    parts = [p.strip() for p in path.split("::") if p.strip()]
    if not parts:
        return None
    if parts[0] == "crate":
        base, rest = (), parts[1:]
    elif parts[0] == "super":
        base = module
        rest = parts
        while rest and rest[0] == "super":
            base = base[:-1]
            rest = rest[1:]
    elif parts[0] == "self":
        base, rest = module, parts[1:]
    else:
        return None
    target = base
    for p in rest:
        if target + (p,) in modules:
            target = target + (p,)
        else:
            break
    return target


def sibling_edge(a, b):
    i = 0
    while i < len(a) and i < len(b) and a[i] == b[i]:
        i += 1
    if i == len(a) or i == len(b):
        return None  # one contains the other
    return a[: i + 1], b[: i + 1]


def sccs(nodes, edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def graph(crate):
    src = os.path.join(ROOT, crate, "src")
    files = {}
    for dirpath, _, names in os.walk(src):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(dirpath, name)
                module = module_of(src, path)
                if module is not None:
                    files[module] = path
    modules = set(files)
    edges = {}
    for module, path in files.items():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        # Inside an inline `mod tests { .. }`, `super` is the file's module.
        head, _, tests = text.partition("\nmod tests {")
        refs = [(module, r) for r in references(head)]
        refs += [(module + ("tests",), r) for r in references(tests)]
        for base, ref in refs:
            target = resolve(base, ref, modules | {base})
            if target is not None and target[-1:] == ("tests",) and target == base:
                target = module
            if target is None:
                continue
            pair = sibling_edge(module, target)
            if pair:
                edges.setdefault(pair[0], set()).add(pair[1])
    return edges


def name(module):
    return "::".join(module) or "(root)"


def main():
    args = [a for a in sys.argv[1:] if a != "--check"]
    check = "--check" in sys.argv[1:]
    total = 0
    for crate in args or crates():
        edges = graph(crate)
        nodes = set(edges) | {w for ws in edges.values() for w in ws}
        print(f"# {crate}")
        for v in sorted(edges):
            print(f"{name(v)} -> {', '.join(name(w) for w in sorted(edges[v]))}")
        cycles = sccs(nodes, edges)
        for c in cycles:
            print(f"CYCLE {crate}: {' <-> '.join(name(m) for m in c)}")
        total += len(cycles)
        print()
    print(f"{total} cycle(s)")
    return 1 if check and total else 0


if __name__ == "__main__":
    sys.exit(main())
