"""Long documents: segmentation, encoded segment stores, aggregations, ExactSDM and SoftSDM."""
