"""``python -m lsr_lucene.distributed`` is ``lsr-lucene distributed``."""
import sys

from lsr_lucene.cli import run_main
from lsr_lucene.distributed.cli import main

sys.exit(run_main(main))
