"""``lsr-lucene java-home`` (also ``python -m lsr_lucene.jvm``): the Java 21+ runtime our JVM uses, for running
Pyserini's own command line on our indexes (docs/python.md "Use from Pyserini")."""
from __future__ import annotations

import shlex
import sys

from lsr_lucene import cli_options as opt
from lsr_lucene.jvm.runtime import OPENAI_PLACEHOLDER, java_home


def exports() -> list[str]:
    """Shell lines that give a separate Pyserini process our runtime and the OpenAI key placeholder it needs."""
    home = str(java_home())
    return [f"export JAVA_HOME={shlex.quote(home)}",
            f"export PATH={shlex.quote(home + '/bin')}:\"$PATH\"",
            f"export OPENAI_API_KEY=\"${{OPENAI_API_KEY:-{OPENAI_PLACEHOLDER}}}\""]


def main(argv: list[str] | None = None) -> int:
    parser = opt.Parser(prog="lsr-lucene java-home", description=opt.summary(__doc__))
    parser.add_argument("--export", action="store_true",
                        help="print shell lines setting JAVA_HOME, PATH and the OpenAI key placeholder Pyserini "
                             "imports need: eval \"$(lsr-lucene java-home --export)\"")
    args = parser.parse_args(argv)
    print("\n".join(exports()) if args.export else java_home())
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
