"""Encoding: masked-LM sparse encoders (SPLADE, SNReLU) that turn text into integer impact vectors."""
