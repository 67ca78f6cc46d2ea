"""``python -m lsr_lucene.fuse``: the same command as ``lsr-lucene fuse``."""
import sys

from lsr_lucene.cli import run_main
from lsr_lucene.fuse.cli import main

sys.exit(run_main(main))
