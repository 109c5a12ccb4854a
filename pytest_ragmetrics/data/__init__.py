"""Datasets: loading and validating rows.

``dataset`` loads, scans and re-reads a dataset, and re-exports what the rest of the
package imports; ``row`` is the row metrics read, ``fields`` the known fields' checks,
``formats`` the reading of each format into records, ``checks`` a record made a row (its
text, fields and id); ``streams``, ``parquet`` and ``sql`` read the bytes, Parquet batches
and a query's rows; ``readonly`` is the read-only view of a row given to user metrics.
"""
