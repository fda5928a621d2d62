"""A symbolic definition's kernel with its size parameters as literals
(session 19, for a later device session). The thunder (static) and manual
(symbolic) rmsnorm backward definitions compile to the same kernel text but
for the sizes (rows = s0, rlen = s1 in the manual one, literals in the
thunder one; and the inputs' order), and at 2048x8192 the manual one has
run ~0.8 us slower in steady state in every corpus run of docs/results.md
(31.2-32.0 against 30.5-31.4 us; under do_bench -0.4 to +1.7 us).
The daemon's cache key already holds a persistent segment's symbol sizes,
so a kernel with them as literals would cost no extra compiles; this
probe says whether it would close the gap: every use of a size parameter in
the kernel body becomes the literal given (the parameters stay, unused).
Usage: literal_sizes.py GENERATED.cu OUT.cu s0=2048 [s1=8192 ...]"""
import re
import sys

from probe_args import probe_args

args = probe_args(3, __doc__)
src, dst, binds = args[0], args[1], args[2:]
s = open(src).read()
head = s.index('extern "C" __global__')
body = s.index("{", s.index(")", head))  # the kernel's opening brace: its parameters stay
k = s[body:]
for b in binds:
    name, _, value = b.partition("=")
    if not re.fullmatch(r"s\d+", name) or not value.lstrip("-").isdigit():
        sys.exit(f"literal_sizes.py: '{b}' is not sN=INTEGER")
    # A size parameter is always used in parentheses, "(s1)" or "(i64)s1)";
    # the epilogue's float4 column sums (s0.x, s0 = ...) never close one.
    k, n = re.subn(rf"\b{name}(?=\))", f"((i64){value})", k)
    if n == 0:
        sys.exit(f"literal_sizes.py: {name} is not used in the kernel of {src}")
open(dst, "w").write(s[:body] + k)
