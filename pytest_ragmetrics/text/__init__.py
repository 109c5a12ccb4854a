"""Text handling shared by the metrics: citations, sentences, IDK detection."""
