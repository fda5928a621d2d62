"""The probes' command lines: the probe's docstring is its usage, printed
for -h/--help (exit 0) and with the reason for too few arguments or an
unknown mode (exit 2)."""
import sys


def probe_args(n, doc, choices=None):
    """sys.argv[1:] when it has at least n arguments and argument i is one
    of choices[i] (choices: {index: allowed values})."""
    args = sys.argv[1:]
    if args[:1] in (["-h"], ["--help"]):
        print(doc.strip())
        sys.exit(0)
    why = f"{n} arguments needed, got {len(args)}" if len(args) < n else ""
    for i, allowed in (choices or {}).items():
        if not why and args[i] not in allowed:
            why = f"argument {i + 1} is '{args[i]}'; expected one of {', '.join(allowed)}"
    if why:
        print(f"{doc.strip()}\n\nerror: {why}", file=sys.stderr)
        sys.exit(2)
    return args
