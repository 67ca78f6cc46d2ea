"""``lsr-lucene build-java``: compile java/ into the lsr_lucene jar."""
from __future__ import annotations

import sys

from lsr_lucene import cli_options as opt
from lsr_lucene.jvm.build import build


def main(argv: list[str] | None = None) -> int:
    parser = opt.Parser(prog="lsr-lucene build-java", description=opt.summary(__doc__))
    parser.add_argument("--force", action="store_true", help="rebuild even when sources are unchanged")
    args = parser.parse_args(argv)
    print(build(force=args.force))
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
