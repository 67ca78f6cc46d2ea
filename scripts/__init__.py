"""Studies and benchmarks beside the product: one folder per study, run from the repository root against the
installed package (``python -m scripts.<study>.<module>``). They import ``lsr_lucene`` and their own folder; the
package never imports them, and the wheel does not ship them."""
