"""Datasets: loading and validating rows."""
