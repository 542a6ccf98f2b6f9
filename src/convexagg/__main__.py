"""``python -m convexagg``: the command line (:mod:`convexagg.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
