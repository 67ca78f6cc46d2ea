"""The long-document sweep behind runs/longdocs (``python -m scripts.longdocs.experiment``; scripts/run_longdocs.sh)."""
