"""Recall: hits, ranking by task, injection, lookup by reference, the usage logs."""
