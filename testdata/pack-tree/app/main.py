"""Command line for the ledger."""

import sys

from app.models import Account

LIMIT = 1000


def main(argv=None):
    """Print each account named on the command line."""
    for name in argv or sys.argv[1:]:
        print(Account(name, 0))


def _debug(value):
    return repr(value)


if __name__ == "__main__":
    main()
