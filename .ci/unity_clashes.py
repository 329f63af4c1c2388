#!/usr/bin/env python3
"""Names that would clash in a unity build: file-local definitions (anonymous namespace or
`static` at namespace scope) with the same name in two sources of one unity batch.

Usage: .ci/unity_clashes.py BUILD_DIR   (a tree configured with -DDRAGON_UNITY_BUILD=ON;
its Unity/unity_*.cxx files name each batch's sources). A heuristic for finding them all
before a 30-minute build does; the compiler has the last word.
"""
import collections, glob, re, sys

def local_names(path):
    names = set()
    depth_stack = []  # for each open brace: is it an anonymous namespace?
    in_anon = 0
    for raw in open(path, errors='replace'):
        line = raw.rstrip('\n')
        s = line.strip()
        if s.startswith('//') or s.startswith('#'):
            continue
        top = in_anon > 0 and depth_stack.count(False) == 0 and line[:1] not in (' ', '}', '')
        static_top = (not in_anon and line.startswith('static ') and depth_stack.count(False) == 0)
        if top or static_top:
            m = re.match(r'(?:template\s*<[^>]*>\s*)?(?:struct|class|enum(?:\s+class)?|union)\s+(\w+)', s)
            if m:
                names.add(m.group(1))
            else:
                m = re.match(r'using\s+(\w+)\s*=', s)
                if m:
                    names.add(m.group(1))
                elif not s.startswith('using ') and not s.startswith('namespace'):
                    head = re.split(r'[=({;]', s, 1)[0]
                    ids = re.findall(r'[A-Za-z_]\w*', head)
                    if ids and ids[-1] not in ('operator', 'const', 'constexpr'):
                        names.add(ids[-1])
        # brace tracking, by line (the project's style opens namespaces on their own line)
        for tok in re.findall(r'namespace\s*\{|namespace\s+[\w:]+\s*\{|\{|\}', re.sub(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])*\'', '', line.split('//')[0])):
            if tok == '}':
                if depth_stack:
                    was_anon = depth_stack.pop()
                    if was_anon is True:
                        in_anon -= 1
            elif tok.startswith('namespace'):
                anon = re.match(r'namespace\s*\{', tok) is not None
                depth_stack.append(True if anon else None)  # None: a named namespace
                if anon:
                    in_anon += 1
            else:
                depth_stack.append(False)
    return names

def main():
    build = sys.argv[1]
    found = 0
    for unity in sorted(glob.glob(f'{build}/**/Unity/unity_*.cxx', recursive=True)):
        sources = re.findall(r'#include "([^"]+)"', open(unity).read())
        owners = collections.defaultdict(list)
        for src in sources:
            for n in local_names(src):
                owners[n].append(src)
        for n, files in sorted(owners.items()):
            if len(files) > 1:
                found += 1
                print(f'{n}: ' + ' '.join(f.split('/work/main/')[-1] for f in files))
    print(f'{found} clashing names', file=sys.stderr)

main()
