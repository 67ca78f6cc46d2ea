"""``python -m lsr_lucene.demo``: the same as ``lsr-lucene demo``."""
import sys

from lsr_lucene.cli import run_main
from lsr_lucene.demo.cli import main

sys.exit(run_main(main))
