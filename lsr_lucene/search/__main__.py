"""``python -m lsr_lucene.search``: the same as ``lsr-lucene search``."""
import sys

from lsr_lucene.cli import run_main
from lsr_lucene.search.cli import main

sys.exit(run_main(main))
