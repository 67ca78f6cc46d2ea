"""Training: fine-tuning (signed) sparse encoders on contrastive pairs and triples."""
