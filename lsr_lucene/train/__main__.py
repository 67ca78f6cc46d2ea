"""``python -m lsr_lucene.train``: the same as ``lsr-lucene train``."""
import sys

from lsr_lucene.cli import run_main
from lsr_lucene.train.cli import main

sys.exit(run_main(main))
