"""The hybrid-run study behind runs/hybrid: a fixed-seed topic split and the results table
(``python -m scripts.fusion.split_topics``, ``python -m scripts.fusion.report``; scripts/run_hybrid.sh)."""
