"""``python -m scripts.bench``: the pipeline benchmark (scripts.bench.cli; once the ``lsr-lucene bench`` verb)."""
import sys

from lsr_lucene.cli import run_main
from scripts.bench.cli import main

sys.exit(run_main(main))
