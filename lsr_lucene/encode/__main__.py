"""``python -m lsr_lucene.encode``: the same as ``lsr-lucene encode``."""
import sys

from lsr_lucene.cli import run_main
from lsr_lucene.encode.cli import main

sys.exit(run_main(main))
