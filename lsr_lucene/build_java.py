"""``python -m lsr_lucene.build_java``: the same as ``lsr-lucene build-java`` (lsr_lucene.jvm.cli)."""
import sys

from lsr_lucene.jvm.cli import main

if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
