"""``python -m lsr_lucene.mcp``: the same as ``lsr-lucene mcp``."""
import sys

from lsr_lucene.cli import run_main
from lsr_lucene.mcp.cli import main

sys.exit(run_main(main))
