"""``python -m lsr_lucene.java_home``: the same as ``lsr-lucene java-home`` (lsr_lucene.jvm.home; also
``python -m lsr_lucene.jvm``)."""
import sys

from lsr_lucene.jvm.home import main

if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
