"""``python -m lsr_lucene.index``: the same as ``lsr-lucene index``."""
import sys

from lsr_lucene.cli import run_main
from lsr_lucene.index.cli import main

sys.exit(run_main(main))
