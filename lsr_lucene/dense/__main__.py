"""``python -m lsr_lucene.dense``: the same command as ``lsr-lucene dense``."""
import sys

from lsr_lucene.cli import run_main
from lsr_lucene.dense.cli import main

sys.exit(run_main(main))
