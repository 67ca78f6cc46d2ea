"""``python -m lsr_lucene.longdocs``: the same as ``lsr-lucene longdocs``."""
import sys

from lsr_lucene.cli import run_main
from lsr_lucene.longdocs.cli import main

sys.exit(run_main(main))
