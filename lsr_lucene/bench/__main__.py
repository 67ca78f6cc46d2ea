"""``python -m lsr_lucene.bench``: the same as ``lsr-lucene bench``."""
import sys

from lsr_lucene.cli import run_main
from lsr_lucene.bench.cli import main

sys.exit(run_main(main))
