"""``python -m lsr_lucene.serve``: the same as ``lsr-lucene serve``."""
import sys

from lsr_lucene.cli import run_main
from lsr_lucene.serve.cli import main

sys.exit(run_main(main))
