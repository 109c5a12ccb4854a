"""Sentence embeddings: the model, the persistent cache, preparing texts up front."""
