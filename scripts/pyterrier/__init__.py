"""PyTerrier interop on the demo collection (``python -m scripts.pyterrier.pyterrier_demo``;
scripts/run_pyterrier_demo.sh)."""
