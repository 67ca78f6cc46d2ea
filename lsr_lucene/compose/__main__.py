"""``python -m lsr_lucene.compose``: the same as ``lsr-lucene compose``."""
import sys

from lsr_lucene.cli import run_main
from lsr_lucene.compose.cli import main

sys.exit(run_main(main))
