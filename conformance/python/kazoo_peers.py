"""What the kazoo programs share: their command line, the check that kazoo imports, and the
line printer. Python finds this module beside the program it runs (the script's directory
comes first on sys.path): the tests run the programs in place, the benchmarks write this
file beside theirs (conformance::peers::KAZOO_PEERS).
"""

import sys


def say(line):
    """Prints one line at once, so that the Rust side can follow along."""
    print(line, flush=True)


def arguments(count, usage):
    """sys.argv[1:], when it holds at least `count` arguments; else prints `usage` (the
    program's docstring) on stderr and exits with status 2."""
    if len(sys.argv) < count + 1:
        print(usage, file=sys.stderr)
        sys.exit(2)
    return sys.argv[1:]


def require_kazoo():
    """Returns once kazoo imports; else prints an ERROR line and exits with status 3."""
    try:
        import kazoo.client  # noqa: F401 - only whether it imports
    except ImportError as e:
        say("ERROR kazoo is not installed (pip install kazoo): %s" % e)
        sys.exit(3)
