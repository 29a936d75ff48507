#!/usr/bin/env python3
"""scripts/doc_snippets.py — every ```cpp block of the user-facing docs compiles against an
installed kccl (or is visibly marked as not a whole snippet).

  scripts/doc_snippets.py --include PREFIX/include/kccl [--out DIR] [--cxx CXX] [-j N] [DOC.md ...]

Default docs: README.md, docs/host-api.md, docs/tutorial.md. The first line of a block decides
what is done with it:

  // fragment: <why>                   not compiled (a piece of a larger program; say where the
                                       whole is)
  // excerpt of <path>                 not compiled here: every code line of the block (comments
                                       and blank lines aside, trailing comments dropped, spaces
                                       collapsed) must be a line of <path> (a file this
                                       repository compiles, e.g. examples/tutorial/*.cpp)
  // continued                         compiled together with the previous compiled block of the
                                       same document (which is then not compiled on its own)
  anything else                        compiled with `-std=c++20 -fsyntax-only -O0`

A compiled block gets this prelude, which the docs state where they use it:

  #include <emulation/collective.hpp>  <cstdio>  <vector>
  namespace kc = kccl::emu::collective;  using namespace kccl::coll;

A block with a definition at column 0 (template, struct, class, a function, TEST_CASE,
BENCHMARK) is compiled at file scope as it is; otherwise its #include / namespace-alias /
using-namespace lines go to file scope and the rest becomes the body of a function.
Blocks that include <testing/catch2.hpp> or <bench/...> are skipped (reported) when Catch2 or
Google Benchmark is not installed. Exit code: 0 if every compiled block compiled and every
excerpt matched, 1 otherwise.
"""
import argparse
import concurrent.futures
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DOCS = ["README.md", "docs/host-api.md", "docs/tutorial.md"]
PRELUDE = """#include <emulation/collective.hpp>
#include <cstdio>
#include <vector>
namespace kc = kccl::emu::collective;
using namespace kccl::coll;
"""
FILE_SCOPE = re.compile(r"^(template\b|struct\b|class\b|static\b|inline\b|void\b|int\b|uint\w+\b|bool\b|TEST_CASE\b|BENCHMARK)")
HOISTED = re.compile(r"^\s*(#include\b|namespace\s+\w+\s*=|using\s+namespace\b|using\s+\w+\s*=)")


def blocks(path):
    """(line number of the fence, lines) of every ```cpp block."""
    out, cur, start = [], None, 0
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            s = line.rstrip("\n")
            if cur is None:
                if s.strip() == "```cpp":
                    cur, start = [], n
            elif s.strip() == "```":
                out.append((start, cur))
                cur = None
            else:
                cur.append(s)
    if cur is not None:
        raise SystemExit(f"doc_snippets: {path}:{start}: a ```cpp block is not closed")
    return out


def code_of(line):
    """A line without its trailing // comment, spaces collapsed ('' for comments and blanks)."""
    s = line
    i = 0
    in_str = False
    while i < len(s) - 1:
        ch = s[i]
        if ch == '"' and (i == 0 or s[i - 1] != "\\"):
            in_str = not in_str
        if not in_str and s[i:i + 2] == "//":
            s = s[:i]
            break
        i += 1
    return " ".join(s.split())


def unit_of(doc, parts):
    """One translation unit for the compiled blocks of a document; #line directives make the
    compiler's messages name the document's own lines."""
    top, rest = [], []
    for i, (start, lines) in enumerate(parts):
        if any(FILE_SCOPE.match(l) for l in lines):
            rest.append(f'#line {start + 1} "{doc}"')
            rest.extend(lines)
            continue
        for n, l in enumerate(lines):
            if HOISTED.match(l):
                top.append(f'#line {start + 1 + n} "{doc}"')
                top.append(l)
        rest.append(f"[[maybe_unused]] static void kccl_doc_snippet_{i}() {{")
        rest.append(f'#line {start + 1} "{doc}"')
        rest.extend("" if HOISTED.match(l) else l for l in lines)
        rest.append("}")
    return PRELUDE + "\n".join(top) + "\n" + "\n".join(rest) + "\n"


def has_header(cxx, flags, header):
    src = f"#include <{header}>\n"
    r = subprocess.run(cxx + flags + ["-fsyntax-only", "-x", "c++", "-"], input=src, text=True, capture_output=True)
    return r.returncode == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--include", required=True, help="the installed headers: PREFIX/include/kccl")
    ap.add_argument("--out", help="directory for the generated sources (default: a temporary one)")
    ap.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("docs", nargs="*")
    a = ap.parse_args()
    docs = a.docs or DEFAULT_DOCS
    cxx = shlex.split(a.cxx)
    flags = ["-std=c++20", "-O0", "-pthread", "-I", a.include]
    out = a.out or tempfile.mkdtemp(prefix="kccl-doc-snippets.")
    os.makedirs(out, exist_ok=True)
    have = {"catch2": has_header(cxx, flags, "catch2/catch.hpp"), "benchmark": has_header(cxx, flags, "benchmark/benchmark.h")}

    jobs, failed, report = [], 0, []   # jobs: (doc, [(start line, lines), ...]) one unit per doc
    for doc in docs:
        path = os.path.join(ROOT, doc)
        parts = []
        for start, lines in blocks(path):
            where = f"{doc}:{start}"
            first = lines[0].strip() if lines else ""
            if first.startswith("// fragment"):
                report.append(f"SKIP  {where} (marked fragment)")
                continue
            m = re.match(r"//\s*excerpt of\s+(\S+)", first)
            if m:
                src = os.path.join(ROOT, m.group(1))
                if not os.path.isfile(src):
                    report.append(f"FAIL  {where}: excerpt of {m.group(1)}, which does not exist")
                    failed += 1
                    continue
                with open(src, encoding="utf-8") as f:
                    known = {code_of(l) for l in f}
                missing = [l.strip() for l in lines[1:] if code_of(l) and code_of(l) not in known]
                if missing:
                    failed += 1
                    report.append(f"FAIL  {where}: excerpt of {m.group(1)}, but these lines are not in it:\n" +
                                  "\n".join("      " + l for l in missing))
                else:
                    report.append(f"PASS  {where} (excerpt of {m.group(1)}: every line is there)")
                continue
            if first.startswith("// continued"):
                if not parts:
                    report.append(f"FAIL  {where}: '// continued' but no compiled block before it in {doc}")
                    failed += 1
                    continue
                s0, l0 = parts[-1]   # one block: the fence between them becomes a blank line
                parts[-1] = (s0, l0 + [""] * (start - s0 - len(l0)) + [""] + lines[1:])
                continue
            text = "\n".join(lines)
            need = [k for k, inc in (("catch2", "<testing/"), ("benchmark", "bench/")) if inc in text and not have[k]]
            if need:
                report.append(f"SKIP  {where} ({' and '.join(need)} not installed)")
                continue
            parts.append((start, lines))
        if parts:
            jobs.append((doc, parts))

    def compile_one(i):
        doc, parts = jobs[i]
        where = doc + ":" + ",".join(str(st) for st, _ in parts)
        src = os.path.join(out, f"snippets_{i}.cpp")
        with open(src, "w", encoding="utf-8") as f:
            f.write(unit_of(doc, parts))
        r = subprocess.run(cxx + flags + ["-fsyntax-only", src], text=True, capture_output=True)
        return where, src, r.returncode, r.stderr, len(parts)

    compiled = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.j)) as ex:
        for where, src, rc, err, nparts in ex.map(compile_one, range(len(jobs))):
            if rc == 0:
                compiled += nparts
                report.append(f"PASS  {where} (compiled: {src})")
            else:
                failed += 1
                report.append(f"FAIL  {where} (compiling {src}):\n" + "\n".join("      " + l for l in err.splitlines()[:40]))
    print("\n".join(report))
    if compiled == 0:
        print("doc_snippets: FAIL: no block was compiled")
        return 1
    print(f"doc_snippets: {'FAIL' if failed else 'PASS'}: {compiled} compiled, "
          f"{sum(1 for r in report if 'excerpt of' in r and r.startswith('PASS'))} excerpts matched, "
          f"{sum(1 for r in report if r.startswith('SKIP'))} skipped, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
