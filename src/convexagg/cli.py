"""The ``convexagg`` command line."""

from __future__ import annotations

import argparse
import sys


def build_parser():
    parser = argparse.ArgumentParser(
        prog="convexagg",
        description="Multiclass classification by binary decomposition with convex aggregation.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="the paper's synthetic study and a digits comparison")
    demo.add_argument("--random-state", type=int, default=0)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.command == "demo":
        from .experiments.demo import main as demo

        demo(random_state=args.random_state)
    return 0


if __name__ == "__main__":
    sys.exit(main())
