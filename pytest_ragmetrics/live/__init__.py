"""A live system under test: calling it per row and caching its outputs."""
