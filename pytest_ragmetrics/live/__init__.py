"""A live system under test: calling it per row, caching its outputs, saving them."""
