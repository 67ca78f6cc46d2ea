"""``python -m lsr_lucene.parse_negation``: the same as ``lsr-lucene parse-negation`` (the negation cue parser's
command, lsr_lucene.compose.parse_negation)."""
import sys

from lsr_lucene.compose.parse_negation import main

if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
