"""``python -m lsr_lucene.jvm``: the same as ``lsr-lucene java-home``."""
import sys

from lsr_lucene.cli import run_main
from lsr_lucene.jvm.home import main

sys.exit(run_main(main))
