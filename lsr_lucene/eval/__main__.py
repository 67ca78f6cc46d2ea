"""``python -m lsr_lucene.eval``: the same as ``lsr-lucene eval``."""
import sys

from lsr_lucene.cli import run_main
from lsr_lucene.eval.cli import main

sys.exit(run_main(main))
