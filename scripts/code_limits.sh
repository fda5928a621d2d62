#!/usr/bin/env bash
# The size limits a reviewer checks in compiler/, as a script (.ci/run calls
# it): no file over 600 lines, no function over 120 lines, and no comment
# that names a dated run, a numbered run or session, or a results file.
# Prints every offender as file:line and exits 1 when there is one.
#
# Function length: each C/C++ file is scanned with comments, string and raw
# string literals blanked out; a '{' whose preceding text ends in a ')'
# (optionally followed by const, override, noexcept, a trailing return type
# or a constructor's initializer list) and is not an if/for/while/switch
# opens a function body, unless it already lies inside one (lambdas and
# local blocks count toward their enclosing function). The body's length is
# the line of its matching '}' minus the line of the '{' plus one.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=${1:-compiler}
MAX_FILE_LINES=600
MAX_FUNCTION_LINES=120
mapfile -t files < <(git ls-files -- "$ROOT" | grep -vE '\.(json|txt|md)$')
fail=0

for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  n=$(wc -l <"$f")
  if [ "$n" -gt "$MAX_FILE_LINES" ]; then
    echo "$f:1: file of $n lines (at most $MAX_FILE_LINES)"
    fail=1
  fi
done

mapfile -t cfiles < <(printf '%s\n' "${files[@]}" | grep -E '\.(cc|h|cpp|cu)$')
if [ "${#cfiles[@]}" -gt 0 ]; then
  python3 - "$MAX_FUNCTION_LINES" "${cfiles[@]}" <<'PY' || fail=1
import re
import sys


def blank(src):
    """src with comments and string/char/raw-string literals blanked (newlines kept)."""
    out, i, n = [], 0, len(src)
    while i < n:
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif re.match(r'R"[^(\s]*\(', src[i:i + 20]) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            delim = re.match(r'R"([^(\s]*)\(', src[i:]).group(1)
            end = src.find(")" + delim + '"', i)
            j = n if end < 0 else end + len(delim) + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif src[i] in "\"'":
            q, j = src[i], i + 1
            while j < n and src[j] != q and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
        else:
            out.append(src[i])
            i += 1
    return "".join(out)


OPENS_FUNCTION = re.compile(
    r"\)\s*(?:const|override|final|noexcept|mutable|\s)*"
    r"(?:->\s*[\w:<>,\s*&]+)?\s*(?::\s*[\w:]+\s*[({][^;{}]*[)}]\s*(?:,\s*[\w:]+\s*[({][^;{}]*[)}]\s*)*)?$")
CONTROL = re.compile(r"\b(?:if|for|while|switch|catch)\s*\((?:[^()]|\([^()]*\))*\)\s*$")

limit = int(sys.argv[1])
bad = 0
for path in sys.argv[2:]:
    text = blank(open(path, encoding="utf-8", errors="replace").read())
    stack, line = [], 1
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c == "{":
            before = text[max(0, i - 400):i].rstrip()
            inside = any(kind == "fn" for kind, _ in stack)
            is_fn = not inside and OPENS_FUNCTION.search(before) and not CONTROL.search(before)
            stack.append(("fn" if is_fn else "block", line))
        elif c == "}" and stack:
            kind, start = stack.pop()
            if kind == "fn" and line - start + 1 > limit:
                print(f"{path}:{start}: function of {line - start + 1} lines (at most {limit})")
                bad = 1
sys.exit(bad)
PY
fi

# Comments say what and why; how it was measured belongs in git history.
dated='(//|/\*|^\s*\*|#).*(20[0-9]{2}-[01][0-9]-[0-3][0-9]|bench/results|results/[A-Za-z0-9_.-]+\.(txt|json|csv|md)|\brun [0-9]+|\bruns? #[0-9]|\bsession[s]? ?[0-9#]*\b)'
if grep -nEi -- "$dated" "${files[@]}" 2>/dev/null; then
  echo "code_limits: the comments above name a dated run, a run number, a session or a results file" >&2
  fail=1
fi
if [ "$fail" != 0 ]; then
  echo "code_limits: $ROOT breaks the limits above" >&2
fi
exit $fail
